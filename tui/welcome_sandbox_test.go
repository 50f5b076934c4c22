package tui

import (
	"strings"
	"sync"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/exocortex/exocortex/config"
	"github.com/exocortex/exocortex/sandbox"
)

// TestWelcomeCardWarnsWithoutSandbox: the interactive terminal says at start,
// as run -p does, when the agent's commands will not be confined: the sandbox
// unavailable on this kernel (forced by $EXOCORTEX_SANDBOX_UNAVAILABLE, through
// the real sandbox.Probe), with the fallback of asking for every command; or
// turned off by the loud setting. Nothing is said when it is on.
func TestWelcomeCardWarnsWithoutSandbox(t *testing.T) {
	for _, tc := range []struct {
		name        string
		unavailable bool
		off         bool
		want        []string
	}{
		{name: "unavailable", unavailable: true, want: []string{"sandbox: NOT AVAILABLE", "EXOCORTEX_SANDBOX_UNAVAILABLE", "every command the agent runs, and every !command, is asked for, even in yolo mode"}},
		{name: "off", off: true, want: []string{"UNSAFE_disable_sandbox", "with all your rights"}},
		{name: "on"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.unavailable {
				t.Setenv(sandbox.EnvUnavailable, "kernel without Landlock, for the test")
			}
			probe := func() sandbox.Status { return sandbox.Probe("") }
			if !tc.unavailable {
				// The sandbox's own tests cover the probe; here only its answer matters.
				probe = func() sandbox.Status { return sandbox.Status{Available: true, LandlockABI: 7} }
			}
			cfg := Config{SandboxProbe: probe, Confine: &config.Confinement{Off: tc.off}}
			e := newEnv(t)
			eng, _ := e.engine(t, "welcome-"+tc.name)
			eng.sandboxWarn = sync.OnceValue(func() string { return sandboxWarning(cfg) })
			u := start(t, eng)
			u.tm.Send(tea.WindowSizeMsg{Width: 100, Height: 40})
			var card string
			u.waitFor("the welcome card", func(m *Model) bool {
				card = strings.Join(strings.Fields(strings.ReplaceAll(plain(m.welcomeCardAt(100)), "│", " ")), " ")
				return m.boot.welcomed
			})
			for _, want := range tc.want {
				if !strings.Contains(card, want) {
					t.Errorf("welcome card lacks %q:\n%s", want, card)
				}
			}
			if len(tc.want) == 0 && strings.Contains(strings.ToLower(card), "sandbox") {
				t.Errorf("the card warns about the sandbox while it is on:\n%s", card)
			}
		})
	}
}
