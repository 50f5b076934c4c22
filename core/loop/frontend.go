package loop

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/exocortex/exocortex/core/host"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// The hooks of the moments around the loop (Agent Zero v1.7 has them too):
// the process's start (startup_migration), a front end opening a session
// (banners), the operator sending a message from the terminal
// (user_message_ui) and a long-running front end's clock (job_loop). The
// loop fires them when a front end asks: the terminal and serve call Banners
// and RunJobLoop, the terminal calls UserMessageUI; startup_migration fires
// from Init, once per host process.

// JobLoopEvery is the job loop's period: Agent Zero's job loop sleeps 60 s
// between ticks (helpers/job_loop.py, SLEEP_TIME).
const JobLoopEvery = time.Minute

// startupMigration fires startup_migration when this agent is the host's
// first to start (host.ClaimStartup).
func (a *Agent) startupMigration(ctx context.Context) error {
	if !a.opts.Host.ClaimStartup() {
		return nil
	}
	return fire(ctx, a, &turn{}, exocortexv1.Hook_HOOK_STARTUP_MIGRATION,
		func(c *exocortexv1.HookCall, _ fields) *exocortexv1.StartupMigrationRequest {
			return &exocortexv1.StartupMigrationRequest{Call: c}
		}, exocortexv1.PluginClient.StartupMigration, nil)
}

// Banners fires banners for a front end opening the session (after
// agent_init, which it fires when it has not run) and returns the banners
// the extensions gave, highest priority first, one per id (the first
// extension's), with secrets masked.
func (a *Agent) Banners(ctx context.Context, fe *exocortexv1.FrontendContext) ([]*exocortexv1.Banner, error) {
	if err := a.Init(ctx); err != nil {
		return nil, err
	}
	var out []*exocortexv1.Banner
	seen := map[string]bool{}
	m := a.masker()
	err := fire(ctx, a, &turn{}, exocortexv1.Hook_HOOK_BANNERS,
		func(c *exocortexv1.HookCall, _ fields) *exocortexv1.BannersRequest {
			return &exocortexv1.BannersRequest{Call: c, Frontend: fe}
		}, exocortexv1.PluginClient.Banners,
		func(_ *host.Extension, r *exocortexv1.BannersResponse) error {
			for _, b := range r.GetBanners() {
				if b.GetId() != "" && seen[b.GetId()] {
					continue
				}
				seen[b.GetId()] = true
				b.Title, b.Text = m.Mask(b.GetTitle()), m.Mask(b.GetText())
				out = append(out, b)
			}
			return nil
		})
	slices.SortStableFunc(out, func(x, y *exocortexv1.Banner) int { return cmp.Compare(y.GetPriority(), x.GetPriority()) })
	return out, err
}

// UserMessageUI fires user_message_ui for a message the operator typed in an
// interactive front end and returns the message as the extensions left it,
// which the front end then gives to Monologue. The text is masked first, as
// Monologue masks it.
func (a *Agent) UserMessageUI(ctx context.Context, text string) (string, error) {
	if err := a.Init(ctx); err != nil {
		return text, err
	}
	text = a.masker().Mask(text)
	err := fire(ctx, a, &turn{}, exocortexv1.Hook_HOOK_USER_MESSAGE_UI,
		func(c *exocortexv1.HookCall, _ fields) *exocortexv1.UserMessageUiRequest {
			return &exocortexv1.UserMessageUiRequest{Call: c, Message: text}
		}, exocortexv1.PluginClient.UserMessageUi,
		func(_ *host.Extension, r *exocortexv1.UserMessageUiResponse) error {
			if r.Message != nil {
				text = r.GetMessage()
			}
			return nil
		})
	return text, err
}

// JobTick fires job_loop once, as tick n (1 for the first). It does not fire
// agent_init (Agent Zero's job loop runs with no agent); it may run beside a
// monologue.
func (a *Agent) JobTick(ctx context.Context, n int64) error {
	return fire(ctx, a, &turn{}, exocortexv1.Hook_HOOK_JOB_LOOP,
		func(c *exocortexv1.HookCall, _ fields) *exocortexv1.JobLoopRequest {
			return &exocortexv1.JobLoopRequest{Call: c, Tick: n}
		}, exocortexv1.PluginClient.JobLoop, nil)
}

// RunJobLoop fires job_loop every period until ctx ends, the first a period
// after it is called; a tick that runs long delays the next (one tick at a
// time, as Agent Zero's loop, which sleeps after each). A tick's failure is an
// event (the extension's error, as at every hook) and does not stop the loop.
// A tick with no extension at job_loop costs a look-up (a plugin hot-loaded
// later may bring some). Long-running front ends (the terminal, serve) run it
// beside the session.
func (a *Agent) RunJobLoop(ctx context.Context, period time.Duration) {
	t := time.NewTimer(period)
	defer t.Stop()
	for n := int64(1); ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := a.JobTick(ctx, n); err != nil && ctx.Err() == nil {
			a.emit(Event{Type: EventNotice, Hook: "job_loop", Text: "job_loop tick: " + err.Error()})
		}
		t.Reset(period)
	}
}
