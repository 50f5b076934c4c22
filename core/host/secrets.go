package host

import (
	"fmt"
	"os"
	"strings"

	"google.golang.org/protobuf/proto"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/secrets"
)

// The host's half of the secrets (package secrets, docs/secrets.md): every
// request to a plugin and every answer from one passes call or Dispatch, and
// both mask it there, so no extension sees a value and none can hand one on;
// ExecuteTool is the one request that may carry values, put in by
// substituteTool for the secrets the tool declares (ToolSpec.uses_secrets).

// Secrets is the operator's secret store (nil when none are configured).
func (h *Host) Secrets() *secrets.Store { return h.opts.Secrets }

// masker is the secrets' masker for plugin traffic (nil: nothing to mask).
func (p *Plugin) masker() *secrets.Masker { return p.h.opts.Secrets.Masker() }

// maskReq masks a request or an answer crossing the process boundary.
func maskReq[M proto.Message](p *Plugin, m M) M { return secrets.MaskProto(p.masker(), m) }

// substituteTool puts the values of the secrets the tool declares in place of
// their placeholders in the arguments (in a copy: the call the loop keeps,
// shows and stores still has the placeholders). A placeholder naming no
// secret, or one the tool did not declare, fails the call with an error the
// model reads, naming the secrets it may use and never a value.
func (h *Host) substituteTool(t *Tool, req *exocortexv1.ExecuteToolRequest) (*exocortexv1.ExecuteToolRequest, error) {
	args := req.GetToolCall().GetArgsJson()
	if !strings.Contains(args, "§§secret(") {
		return req, nil
	}
	out, changed, err := h.opts.Secrets.SubstituteJSON(args, t.Spec.GetName(), t.Spec.GetUsesSecrets())
	if err != nil {
		return nil, fmt.Errorf("tool %s: %w", t.Spec.GetName(), err)
	}
	if !changed {
		return req, nil
	}
	c := proto.Clone(req).(*exocortexv1.ExecuteToolRequest)
	c.ToolCall.ArgsJson = out
	return c, nil
}

// pluginEnviron is the host's environment less the variables secrets are read
// from: a plugin gets a value only through a tool call that declares it.
func (h *Host) pluginEnviron() []string {
	env := os.Environ()
	s := h.opts.Secrets
	if s == nil {
		return env
	}
	hidden := map[string]bool{}
	for _, n := range s.Names() {
		if src, _ := s.Source(n); src.Env != "" {
			hidden[src.Env] = true
		}
	}
	out := env[:0:0]
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if !hidden[k] {
			out = append(out, kv)
		}
	}
	return out
}
