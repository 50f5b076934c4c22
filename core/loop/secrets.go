package loop

import (
	"strings"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/secrets"
)

// The loop's half of the secrets (package secrets, docs/secrets.md). The
// masker is the host's (Host.Secrets), and the loop applies it at its own
// choke points, each one function every path of its kind goes through:
//
//   - the model: New wraps the providers (secrets.MaskProvider), so every
//     request — the main model's, compression's, utility calls, plugins'
//     utility calls — is masked as it leaves, whatever built it;
//   - the history and the session file: addMessage masks a message before
//     hist_add_before and again after it (an extension may rewrite it);
//   - the operator's words: Monologue masks the user message first;
//   - the observer (the terminal's transcript, run --json): emit masks every
//     event;
//   - the plugins: the host masks every request and answer (core/host).

// masker is the secrets' masker (nil when there are none).
func (a *Agent) masker() *secrets.Masker { return a.opts.Host.Secrets().Masker() }

// maskMessage masks a message's text in place (the message is the loop's own,
// about to enter the history).
func (a *Agent) maskMessage(m *exocortexv1.Message) {
	mk := a.masker()
	if mk == nil {
		return
	}
	m.Content = mk.Mask(m.Content)
	for k, v := range m.Metadata {
		m.Metadata[k] = mk.Mask(v)
	}
}

// maskEvent masks every text an event carries.
func maskEvent(mk *secrets.Masker, e *Event) {
	if mk == nil {
		return
	}
	e.Text = mk.Mask(e.Text)
	e.Result = mk.Mask(e.Result)
	e.Error = mk.Mask(e.Error)
	e.StopReason = mk.Mask(e.StopReason)
	e.Args = mk.MaskBytes(e.Args)
	e.Context = mk.MaskBytes(e.Context)
	e.Request = maskRequest(mk, e.Request)
	if len(e.NativeCalls) > 0 {
		calls := make([]NativeCall, len(e.NativeCalls))
		for i, c := range e.NativeCalls {
			calls[i] = NativeCall{Name: c.Name, Arguments: mk.MaskBytes(c.Arguments)}
		}
		e.NativeCalls = calls
	}
	if c := e.Compression; c != nil && (mk.Contains(c.Added) || mk.Contains(c.Summary)) {
		cc := *c
		cc.Added, cc.Summary = mk.Mask(c.Added), mk.Mask(c.Summary)
		e.Compression = &cc
	}
	if r := e.ContextReport; r != nil && mk.Contains(r.Summary) {
		rc := *r
		rc.Summary = mk.Mask(r.Summary)
		e.ContextReport = &rc
	}
}

// secretsPrompt is the system prompt's line naming the secrets the agent may
// use ("" when there are none): names only, never values.
func (a *Agent) secretsPrompt() string {
	names := a.opts.Host.Secrets().Names()
	if len(names) == 0 {
		return ""
	}
	ps := make([]string, len(names))
	for i, n := range names {
		ps[i] = secrets.Placeholder(n)
	}
	text, err := a.opts.Prompts.Render("agent.system.secrets", map[string]any{"secrets": strings.Join(ps, ", ")})
	if err != nil {
		return "Secrets you may use in tool arguments (the tool gets the value; you never see it): " + strings.Join(ps, ", ")
	}
	return strings.TrimSpace(text)
}

// checkSecrets refuses, at start, a secret whose value is in the system
// prompt's own text (the prompt files as rendered, before any extension adds
// to them).
func (a *Agent) checkSecrets() error {
	s := a.opts.Host.Secrets()
	if s == nil {
		return nil
	}
	system, _, err := a.baseSystemPrompt()
	if err != nil {
		return err
	}
	return s.CheckText("the system prompt", system)
}
