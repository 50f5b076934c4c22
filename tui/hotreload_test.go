package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// TestHotReloadInTheSession: a plugin installed while the session runs is
// added, and one deleted is taken out, each with a line in the transcript and
// the footer's count following, inline and full screen; a message after the
// addition reaches the model with the new plugin's tools.
func TestHotReloadInTheSession(t *testing.T) {
	for _, fullscreen := range []bool{false, true} {
		name := "inline"
		if fullscreen {
			name = "fullscreen"
		}
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			eng, srv := e.engine(t, "reload", answer("first"), answer("second"))
			eng.cfg.Fullscreen = fullscreen
			u := start(t, eng)
			count := func() int {
				n := 0
				u.inspect(func(m *Model) { n = len(m.plugins) })
				return n
			}
			if n := count(); n != 1 {
				t.Fatalf("plugins at start: %d, want 1 (gate)", n)
			}
			if !strings.Contains(u.view(), "plugins 1/1") {
				t.Fatalf("footer at start:\n%s", u.view())
			}

			bin := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/tui/testdata/optools")
			if err := os.Rename(bin, filepath.Join(e.plugins, "optools")); err != nil {
				t.Fatal(err)
			}
			u.waitPrinted("↻ plugin optools added: version 1.0.0")
			u.waitFor("the footer to count two plugins", func(m *Model) bool {
				return strings.Contains(plain(m.View().Content), "plugins 2/2")
			})
			if len(eng.Host().Pending()) != 0 {
				t.Errorf("still staged while idle: %v", eng.Host().Pending())
			}
			u.submit("hello")
			u.waitPrinted("first")
			u.idle()
			reqs := srv.Requests()
			if len(reqs) == 0 || !strings.Contains(reqs[len(reqs)-1].Messages[0].Content, "memory_forget") {
				t.Errorf("the request after the addition lacks the new plugin's tools")
			}

			if err := os.Remove(filepath.Join(e.plugins, "optools")); err != nil {
				t.Fatal(err)
			}
			u.waitPrinted("↻ plugin optools removed")
			u.waitFor("the footer to count one plugin", func(m *Model) bool {
				return strings.Contains(plain(m.View().Content), "plugins 1/1")
			})
			for _, p := range eng.Host().Status() {
				if p.Name == "optools" {
					t.Errorf("optools is still in the host's status: %+v", p)
				}
			}
		})
	}
}

// TestReloadLine: the transcript's line for each hot-reload event, and none
// for the others.
func TestReloadLine(t *testing.T) {
	tests := []struct {
		ev    host.Event
		want  string
		isErr bool
		ok    bool
	}{
		{host.Event{Kind: host.EventReload, Plugin: "demo", Detail: "version 0.1.0 -> 0.1.0 from /p/demo"}, "plugin demo reloaded: version 0.1.0 -> 0.1.0 from /p/demo", false, true},
		{host.Event{Kind: host.EventAdded, Plugin: "x", Detail: "version 1 from /p/x"}, "plugin x added: version 1 from /p/x", false, true},
		{host.Event{Kind: host.EventRemoved, Plugin: "x"}, "plugin x removed", false, true},
		{host.Event{Kind: host.EventReloadRejected, Plugin: "x", Detail: "new plugin x was not loaded (start check): boom"}, "new plugin x was not loaded (start check): boom", true, true},
		{host.Event{Kind: host.EventStaged, Plugin: "x"}, "", false, false},
		{host.Event{Kind: "crash", Plugin: "x"}, "", false, false},
	}
	for _, tc := range tests {
		t.Run(tc.ev.Kind, func(t *testing.T) {
			got, isErr, ok := reloadLine(tc.ev)
			if got != tc.want || isErr != tc.isErr || ok != tc.ok {
				t.Errorf("reloadLine(%+v) = %q, %t, %t; want %q, %t, %t", tc.ev, got, isErr, ok, tc.want, tc.isErr, tc.ok)
			}
		})
	}
}
