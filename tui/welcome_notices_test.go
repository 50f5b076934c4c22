package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/exocortex/exocortex/lint"
	"github.com/exocortex/exocortex/prompts"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// TestWelcomeCardShowsHostNotices: the host's notices reach the welcome card
// — a plugin kept out for a wiring error (the fixture plugin "alpha" reads a
// key nobody writes, EXO031) and a file the loader skips (a script without
// its execute bit) — each from the real host, next to the running gate plugin.
func TestWelcomeCardShowsHostNotices(t *testing.T) {
	e := newEnv(t)
	e.wiring = lint.HostCheck(prompts.Embedded())
	fixture := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/core/host/testdata/fixture")
	pdir := filepath.Join(e.plugins, "alpha")
	if err := os.MkdirAll(pdir, 0o755); err != nil {
		t.Fatal(err)
	}
	manifest := `{"plugin":"alpha","version":"test",
	 "stateKeys":[{"name":"alpha_in","type":"google.protobuf.StringValue","scope":"SCOPE_SESSION"}],
	 "extensions":[{"name":"a1","hook":"HOOK_MESSAGE_LOOP_END","order":10,"reads":["alpha_in"]}]}`
	mf := filepath.Join(pdir, "manifest.json")
	if err := os.WriteFile(mf, []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pdir, "plugin.json"), []byte(`{"command":["`+fixture+`","-manifest","`+mf+`"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	stray := filepath.Join(e.plugins, "stray.py")
	if err := os.WriteFile(stray, []byte("#!/usr/bin/env python3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	eng, _ := e.engine(t, "notices")
	u := start(t, eng)
	u.tm.Send(tea.WindowSizeMsg{Width: 100, Height: 40})
	var card string
	u.waitFor("the host's notices on the welcome card", func(m *Model) bool {
		card = plain(m.welcomeCardAt(100))
		return strings.Contains(card, "plugin alpha was kept out") && strings.Contains(card, "no execute bit")
	})
	for _, want := range []string{"EXO031", "stray.py", "gate"} {
		if !strings.Contains(strings.ReplaceAll(card, "\n", " "), want) {
			t.Errorf("welcome card lacks %q:\n%s", want, card)
		}
	}
}
