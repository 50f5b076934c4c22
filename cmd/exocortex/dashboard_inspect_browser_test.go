package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/exocortex/exocortex/server/inspect"
)

// TestDashboardSawAndWiringBrowser opens the "what the model saw" and "live
// wiring" views in a real headless chromium against a real `exocortex
// serve` (built-in plugins, a plugin that crashes in its first call, the
// scripted model), signed in with the agent key: the recall block is shown
// with its extension and hook and the memory with why it was chosen; the
// timeline has one row per hook firing the API lists, in order, the crash
// as a failed bar whose details a keyboard focus shows; the budget is a
// stacked bar; and axe-core finds no serious violation, light and dark.
func TestDashboardSawAndWiringBrowser(t *testing.T) {
	chromiumPath(t)
	crash := serveBuild(t, "github.com/exocortex/exocortex/cmd/exocortex/testdata/crashonce")
	s := startServe(t, serveBinary(t), inspectScript, "", map[string]string{"crashonce": crash},
		"EXOCORTEX_API_KEY=admin-key", "EXOCORTEX_AGENT_KEY=agent-key", "EXOCORTEX_TEST_CRASH_MARKER="+filepath.Join(t.TempDir(), "crashed"))
	admin, agent := []string{"X-API-KEY", "admin-key"}, []string{"X-API-KEY", "agent-key"}
	if st, body := s.do(t, "POST", "/api/v1/memory", `{"text":"the deploy runbook lives in the ops wiki under blue-falcon-42"}`, admin...); st != 201 {
		t.Fatalf("saving the memory: %d %v", st, body)
	}
	st, body := s.do(t, "POST", "/api/api_message", `{"message":"where does the deploy runbook live?"}`, agent...)
	session, _ := body["context_id"].(string)
	if st != 200 || session == "" {
		t.Fatalf("api_message: %d %v\nstderr:\n%s", st, body, s.log())
	}
	var w inspect.WiringReply
	s.getJSON(t, "GET", "/api/v1/wiring/"+session, 200, &w, agent...)

	p := openBrowser(t, s.url, 1280, 800)
	step := func(name string, fn func(t *testing.T)) {
		if !t.Run(name, func(t *testing.T) { p.t = t; fn(t) }) {
			t.FailNow()
		}
	}
	step("sign in", func(t *testing.T) { p.signIn("agent-key") })

	step("what the model saw", func(t *testing.T) {
		p.js(fmt.Sprintf(`location.hash = %q`, "#/saw/"+session))
		p.waitFor("the recall block", `document.querySelector('.saw-block.recall')`)
		label := p.js(`document.querySelector('.saw-block.recall summary').textContent`)
		if !strings.Contains(label, "MEMORY RECALL") || !strings.Contains(label, "recall") || !strings.Contains(label, "message_loop_prompts_after") {
			t.Errorf("the recall block's label: %s", label)
		}
		mem := p.js(`document.querySelector('.saw-memories li')?.textContent || ''`)
		if !strings.Contains(mem, "blue-falcon-42") || !strings.Contains(mem, "Why:") || !strings.Contains(mem, "by recall") {
			t.Errorf("the recalled memory: %s", mem)
		}
		if n := p.js(`document.querySelectorAll('.saw-iteration .budget-bar[role=img] .seg').length`); n == "0" {
			t.Errorf("no budget bar segments")
		}
		p.axe("saw")
		p.shot("saw-light")
	})

	step("live wiring", func(t *testing.T) {
		p.js(fmt.Sprintf(`location.hash = %q`, "#/wiring/"+session))
		p.waitFor("the timeline", `document.querySelectorAll('.tl-row').length > 0`)
		var rows []string
		if err := p.eval(`[...document.querySelectorAll('.tl-row .tl-label')].map(e => e.textContent)`, &rows); err != nil {
			t.Fatal(err)
		}
		if len(rows) != len(w.Hooks) {
			t.Fatalf("%d rows for %d hook firings: %v", len(rows), len(w.Hooks), rows)
		}
		for i, h := range w.Hooks {
			if want := fmt.Sprintf("%d·%s", h.Iteration, h.Hook); rows[i] != want {
				t.Errorf("row %d: %q, want %q", i, rows[i], want)
			}
		}
		failed := p.js(`document.querySelector('.tl-bar.failed')?.getAttribute('aria-label') || ''`)
		if !strings.Contains(failed, "crashonce/crash_once") || !strings.Contains(failed, "crashed") {
			t.Errorf("the crash's bar: %s", failed)
		}
		p.run(chromedp.Focus(chromedp.CSS(".tl-bar.failed")))
		p.waitFor("the call's details", `document.querySelector('.tl-detail').textContent.includes('FAILED (crashed)')`)
		if got := p.js(`document.querySelector('.tl-detail').textContent`); strings.Contains(got, "null") || !strings.Contains(got, "message_loop_end") {
			t.Errorf("the call's details: %s", got)
		}
		if got := p.js(`document.querySelector('.wiring-problems')?.textContent || ''`); !strings.Contains(got, "crashonce/crash_once") {
			t.Errorf("the failures box: %s", got)
		}
		if got := p.js(`[...document.querySelectorAll('.wiring table th[scope=row]')].map(e => e.textContent)`); !strings.Contains(got, "memory_candidates") {
			t.Errorf("the keys table: %s", got)
		}
		if got := p.js(`document.querySelector('.budgets .budget-bar').getAttribute('aria-label')`); !strings.Contains(got, "Recall") || !strings.Contains(got, "Fixed prompt") {
			t.Errorf("the budget bar's label: %s", got)
		}
		p.axe("wiring (light)")
		p.shot("wiring-light")
		p.js(`document.documentElement.dataset.theme = 'dark'`)
		p.axe("wiring (dark)")
		p.shot("wiring-dark")
		p.js(fmt.Sprintf(`location.hash = %q`, "#/saw/"+session))
		p.waitFor("the recall block", `document.querySelector('.saw-block.recall')`)
		p.axe("saw (dark)")
	})
}

// shot saves a full-page screenshot as NAME.png in the directory
// EXOCORTEX_INSPECT_SHOTS names, when it is set (to look at the views).
func (p *page) shot(name string) {
	p.t.Helper()
	dir := os.Getenv("EXOCORTEX_INSPECT_SHOTS")
	if dir == "" {
		return
	}
	ctx, cancel := context.WithTimeout(p.ctx, waitLong)
	defer cancel()
	buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		p.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), buf, 0o644); err != nil {
		p.t.Fatal(err)
	}
}
