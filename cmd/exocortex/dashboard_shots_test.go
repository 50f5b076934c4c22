package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
)

// shotsScript answers the one turn TestDashboardShots runs.
const shotsScript = `model: scripted
replies:
  - content: '{"thoughts":["the runbook is in memory"],"headline":"Answering","tool_name":"response","tool_args":{"text":"The deploy runbook lives in the **ops wiki** under ` + "`blue-falcon-42`" + `:\n\n1. build\n2. test\n3. ship\n\n` + "```sh\\nmake deploy SERVICE=api\\n```" + `"}}'
`

// TestDashboardShots takes the screenshots under docs/dashboard/ (make
// dashboard-shots sets EXOCORTEX_DASHBOARD_SHOTS to that directory): each
// page, light and dark, at 1280×800 and on a 390-wide phone.
func TestDashboardShots(t *testing.T) {
	dir := os.Getenv("EXOCORTEX_DASHBOARD_SHOTS")
	if dir == "" {
		t.Skip("set EXOCORTEX_DASHBOARD_SHOTS to a directory (make dashboard-shots) to take the screenshots")
	}
	chromiumPath(t)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	writeLongSession(t, home, "deploys", 12)
	s := startServeIn(t, home, serveBinary(t), shotsScript, "", nil, "EXOCORTEX_API_KEY=admin-key")
	admin := []string{"X-API-KEY", "admin-key"}
	for _, text := range []string{"the deploy runbook lives in the ops wiki under blue-falcon-42", "deploys go out on Tuesdays", "the staging cluster is amber-otter-7"} {
		if st, body := s.do(t, "POST", "/api/v1/memory", `{"text":"`+text+`","tags":["ops"]}`, admin...); st != 201 {
			t.Fatalf("saving a memory: %d %v", st, body)
		}
	}
	st, body := s.do(t, "POST", "/api/api_message", `{"message":"where does the deploy runbook live?"}`, admin...)
	runbook, _ := body["context_id"].(string)
	if st != 200 || runbook == "" {
		t.Fatalf("a turn: %d %v", st, body)
	}
	p := openBrowser(t, s.url, 1280, 800)
	shots := []struct{ name, hash, ready string }{
		{"signin", "", `document.querySelector('#apikey')`},
		{"chat", "#/chat/" + runbook, `document.querySelector('.messages .md')`},
		{"memory", "#/memory", `document.querySelector('.mem-counts table')`},
		{"saw", "#/saw/" + runbook, `document.querySelector('.saw-block')`},
		{"wiring", "#/wiring/" + runbook, `document.querySelector('.view-wiring h1') && !document.querySelector('.view-wiring [aria-busy=true]')`},
		{"plugins", "#/plugins", `document.querySelector('.plugin, .plugins p')`},
	}
	for _, vp := range []struct {
		name string
		w, h int64
	}{{"desktop", 1280, 800}, {"phone", 390, 844}} {
		for _, theme := range []string{"light", "dark"} {
			for _, sh := range shots {
				p.run(chromedp.EmulateViewport(vp.w, vp.h))
				p.js(`(() => { localStorage.setItem('exocortex.theme', '` + theme + `'); return true })()`)
				if sh.name == "signin" {
					p.js(`(async () => { const s = await fetch('/api/v1/auth/session').then(r => r.ok ? r.json() : {}); await fetch('/api/v1/auth/logout', {method: 'POST', headers: {'X-CSRF-Token': s.csrf || ''}}); return true })()`)
					p.run(navigate(s.url + "/?shot=" + vp.name + theme))
				} else {
					if p.js(`!!document.querySelector('#apikey')`) == "true" {
						p.signIn("admin-key")
					}
					p.run(navigate(s.url + "/" + sh.hash))
				}
				p.waitFor(sh.name, sh.ready)
				p.js(`(() => { document.documentElement.dataset.theme = '` + theme + `'; return true })()`)
				if sh.name == "memory" {
					p.js(`(() => { const q = document.querySelector('#mem-q'); q.value = 'deploy'; q.form.requestSubmit(); return true })()`)
					p.waitFor("hits", `document.querySelector('.hit')`)
				}
				p.js(`new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))`)
				png, err := chromedp.Run(p.ctx, chromedp.CaptureScreenshot())
				if err != nil {
					t.Fatal(err)
				}
				file := filepath.Join(dir, sh.name+"-"+theme+"-"+vp.name+".png")
				if err := os.WriteFile(file, png, 0o644); err != nil {
					t.Fatal(err)
				}
				t.Logf("wrote %s (%d KB)", file, len(png)>>10)
			}
		}
	}
}
