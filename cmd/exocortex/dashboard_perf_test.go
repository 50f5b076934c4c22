package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/core/session"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// writeLongSession writes session name with n messages into home, as the
// terminal leaves one: questions, answers in the reply format (Markdown,
// code), tool calls and their results.
func writeLongSession(t *testing.T, home, name string, n int) {
	t.Helper()
	s, err := session.Open(context.Background(), filepath.Join(home, "sessions"), name)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	reply := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	for i := 0; i < n; i++ {
		var m *exocortexv1.Message
		switch i % 4 {
		case 0:
			m = &exocortexv1.Message{Role: "user", Content: fmt.Sprintf("Question %d: how do the deploys of service %d go?", i, i%17)}
		case 1:
			m = &exocortexv1.Message{Role: "assistant", Content: reply(map[string]any{"thoughts": []string{"look it up"}, "headline": "Reading",
				"tool_name": "shell_echo", "tool_args": map[string]any{"cmd": fmt.Sprintf("grep -n deploy notes/%d.md", i)}})}
		case 2:
			m = &exocortexv1.Message{Role: "tool", ToolName: "shell_echo", Content: strings.Repeat(fmt.Sprintf("notes/%d.md: deploy on Tuesday\n", i), 5)}
		case 3:
			m = &exocortexv1.Message{Role: "assistant", Content: reply(map[string]any{"thoughts": []string{"answer"}, "tool_name": "response",
				"tool_args": map[string]any{"text": fmt.Sprintf("Deploys of service %d go out on **Tuesdays**:\n\n- build\n- test\n- ship\n\n```sh\nmake deploy SERVICE=%d # %d\n```", i%17, i%17, i)}})}
		}
		if err := s.Append(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDashboardLongSessionAndFirstLoad measures, in a real chromium against
// a real serve (no key: loopback), the first load of the dashboard (bytes
// transferred, gzipped, and the time until the first view is drawn) and a
// 2,000-message session opening and scrolling to its top: the long tasks
// (over 50 ms) the page had, from a PerformanceObserver. It prints the
// figures for docs/PERFORMANCE.md; it asserts what was drawn, not the time.
func TestDashboardLongSessionAndFirstLoad(t *testing.T) {
	chromiumPath(t)
	home := t.TempDir()
	const n = 2000
	writeLongSession(t, home, "long", n)
	s := startServeIn(t, home, serveBinary(t), "model: scripted\nreplies:\n  - content: unused\n", "", nil)
	p := openBrowser(t, s.url, 1280, 800)
	p.waitFor("the first view", `performance.getEntriesByName('dashboard-ready').length`)
	var load struct {
		Ready, Nav, Assets, AssetsRaw float64
		Files                         int
	}
	if err := p.eval(`(() => {
		const nav = performance.getEntriesByType('navigation')[0];
		const res = performance.getEntriesByType('resource').filter(r => r.name.includes('/assets/'));
		return {Ready: performance.getEntriesByName('dashboard-ready')[0].startTime, Nav: nav.transferSize,
			Assets: res.reduce((a, r) => a + r.transferSize, 0), AssetsRaw: res.reduce((a, r) => a + r.decodedBodySize, 0) + nav.decodedBodySize, Files: res.length + 1};
	})()`, &load); err != nil {
		t.Fatal(err)
	}
	total := load.Nav + load.Assets
	t.Logf("first load: %.1f KB transferred in %d files (%.1f KB uncompressed); first view drawn %.0f ms after navigation start", total/1024, load.Files, load.AssetsRaw/1024, load.Ready)
	if total > 300*1024 {
		t.Errorf("the first load transferred %.0f bytes, over 300 KB", total)
	}

	// The long session: observe long tasks, open it, wait for every message, scroll to the top.
	p.js(`(() => { window.__long = []; new PerformanceObserver(l => { for (const e of l.getEntries()) window.__long.push(e.duration) }).observe({type: 'longtask', buffered: false}); return true })()`)
	p.js(`(() => { window.__t0 = performance.now(); location.hash = '#/memory'; return true })()`)
	p.waitFor("another view", `document.querySelector('#mem-q')`)
	p.js(`(() => { window.__long = []; window.__t0 = performance.now(); location.hash = '#/chat/long'; return true })()`)
	p.waitFor("the session's last messages", `document.querySelector('.chat-title')?.textContent === 'long' && document.querySelectorAll('.messages .msg').length > 10`)
	var first float64
	_ = p.eval(`performance.now() - window.__t0`, &first)
	var scroll struct {
		Steps int
		MS    float64
	}
	// Scroll up a screen a frame until the session's first message is drawn
	// (older messages are drawn as they come near).
	if err := p.eval(`(async () => {
		const log = document.querySelector('.messages'); const t0 = performance.now(); let steps = 0;
		while ((log.scrollTop > 0 || log.dataset.complete !== 'true') && steps < 5000) {
			log.scrollTop = Math.max(0, log.scrollTop - log.clientHeight); steps++;
			await new Promise(r => requestAnimationFrame(() => r()));
		}
		return {Steps: steps, MS: performance.now() - t0};
	})()`, &scroll); err != nil {
		t.Fatal(err)
	}
	var all float64
	_ = p.eval(`performance.now() - window.__t0`, &all)
	var long []float64
	if err := p.eval(`window.__long`, &long); err != nil {
		t.Fatal(err)
	}
	worst := 0.0
	for _, d := range long {
		worst = max(worst, d)
	}
	drawn := p.js(`document.querySelectorAll('.messages .msg').length`)
	t.Logf("%d-message session: last messages drawn %.0f ms after the route changed; scrolled to the first in %d frames, %.0f ms (%.0f ms after the route changed, %s elements); long tasks over 50 ms: %d (longest %.0f ms) in %v",
		n, first, scroll.Steps, scroll.MS, all, drawn, len(long), worst, long)
	if !strings.Contains(p.js(`document.querySelector('.messages .msg')?.textContent || ''`), "Question 0:") {
		t.Errorf("the top of the session is not its first message")
	}
}
