package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The dashboard's browser tests drive Debian's chromium (make browser) with
// chromedp against a real `exocortex serve`; they skip, saying so, when it
// is not installed.

// waitLong is how long a browser test waits for a condition: generous, as
// CI runs eight packages at once on two cores.
const waitLong = 60 * time.Second

// chromiumPath finds the browser, or skips the test.
func chromiumPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("EXOCORTEX_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no chromium found: `make browser` installs Debian's (or set EXOCORTEX_CHROMIUM)")
	return ""
}

// axeSource is axe-core's script (make browser puts it in .tools/axe), or "" when absent.
func axeSource(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, ".tools/axe/node_modules/axe-core/axe.min.js"))
	if err != nil {
		return ""
	}
	return string(b)
}

// page is one browser tab on the dashboard.
type page struct {
	t   *testing.T
	ctx context.Context
	url string
	// a11y are the serious or critical axe violations found so far, by
	// page: reported when the test ends, so one page's do not stop the rest.
	a11y []string
}

// openBrowser starts a headless chromium of width×height until the test ends.
func openBrowser(t *testing.T, url string, width, height int) *page {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.WindowSize(width, height),
		chromedp.Flag("disable-dev-shm-usage", true),
	)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelB := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelB(); cancelA() })
	p := &page{t: t, ctx: bctx, url: url}
	t.Cleanup(func() {
		if len(p.a11y) > 0 {
			t.Errorf("axe-core found serious or critical violations:\n%s", strings.Join(p.a11y, "\n"))
		}
	})
	// The first run starts the browser, which lives as long as its context:
	// it gets no deadline of its own.
	if err := chromedp.Do(bctx, chromedp.Navigate(url+"/")); err != nil {
		t.Fatalf("opening %s in chromium: %v", url, err)
	}
	return p
}

// run runs actions with a generous deadline.
func (p *page) run(actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, waitLong)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		p.t.Fatalf("in the browser: %v\nthe page: %s", err, p.text())
	}
}

// eval evaluates the JavaScript expression js (awaiting a promise) into out.
func (p *page) eval(js string, out any) error {
	ctx, cancel := context.WithTimeout(p.ctx, waitLong)
	defer cancel()
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[json.RawMessage](js, chromedp.EvalAwaitPromise))
	if err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(raw, out)
}

// js evaluates js and returns its value as JSON text.
func (p *page) js(js string) string {
	p.t.Helper()
	var out any
	if err := p.eval(js, &out); err != nil {
		p.t.Fatalf("evaluating %s: %v", js, err)
	}
	b, _ := json.Marshal(out)
	return string(b)
}

// text is the page's visible text, clipped, for failure messages.
func (p *page) text() string {
	var s string
	ctx, cancel := context.WithTimeout(p.ctx, 10*time.Second)
	defer cancel()
	s, _ = chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	if len(s) > 3000 {
		s = s[:3000] + "…"
	}
	return s
}

// waitFor waits until the JavaScript expression cond is truthy and returns
// how long it took.
func (p *page) waitFor(what, cond string) time.Duration {
	p.t.Helper()
	start := time.Now()
	for deadline := start.Add(waitLong); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		var ok bool
		if err := p.eval("!!("+cond+")", &ok); err == nil && ok {
			return time.Since(start)
		}
	}
	p.t.Fatalf("waited %s for %s (%s); the page:\n%s", waitLong, what, cond, p.text())
	return 0
}

// signIn signs in with key through the form.
func (p *page) signIn(key string) {
	p.t.Helper()
	p.waitFor("the sign-in form", `document.querySelector('#apikey')`)
	p.run(chromedp.SendKeys(chromedp.CSS("#apikey"), key), chromedp.Click(chromedp.CSS(`form.signin button[type=submit]`)))
	p.waitFor("the navigation after signing in", `document.querySelector('#nav a')`)
}

// axe runs axe-core on the page and fails on a serious or critical violation.
func (p *page) axe(name string) {
	p.t.Helper()
	src := axeSource(p.t)
	if src == "" {
		p.t.Logf("axe-core is not in .tools/axe (make browser): the accessibility pass of %s is skipped", name)
		return
	}
	var loaded bool
	if err := p.eval(src+"\n;true", &loaded); err != nil {
		p.t.Fatalf("injecting axe-core: %v", err)
	}
	var res []struct {
		ID, Impact, Help string
		Nodes            []struct{ Target []any } `json:"nodes"`
	}
	err := p.eval(`axe.run(document, {resultTypes: ['violations']}).then(r => r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 5).map(n => ({target: n.target}))})))`, &res)
	if err != nil {
		p.t.Fatalf("axe on %s: %v", name, err)
	}
	var bad []string
	for _, v := range res {
		if v.Impact == "serious" || v.Impact == "critical" {
			bad = append(bad, fmt.Sprintf("%s (%s): %s at %v", v.ID, v.Impact, v.Help, v.Nodes))
		}
	}
	if len(bad) > 0 {
		p.t.Logf("axe on %s: %d serious or critical violations:\n%s", name, len(bad), strings.Join(bad, "\n"))
		p.a11y = append(p.a11y, name+": "+strings.Join(bad, "; "))
	} else {
		p.t.Logf("axe on %s: %d violations, none serious or critical", name, len(res))
	}
}

// chromedpSend types text into the chat's textarea and presses Enter.
func chromedpSend(text string) []chromedp.Action[chromedp.Void] {
	return []chromedp.Action[chromedp.Void]{
		chromedp.WaitVisible(chromedp.CSS("#chat-input")),
		chromedp.Focus(chromedp.CSS("#chat-input")),
		chromedp.SendKeys(chromedp.CSS("#chat-input"), text),
		chromedp.KeyEvent("\r"),
	}
}

// chromedpType types text into the element sel.
func chromedpType(sel, text string) []chromedp.Action[chromedp.Void] {
	return []chromedp.Action[chromedp.Void]{chromedp.WaitVisible(chromedp.CSS(sel)), chromedp.SendKeys(chromedp.CSS(sel), text)}
}

// clickText clicks the first element matching sel whose text is text, as a
// user would (a real mouse click on its centre).
func clickText(sel, text string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		js := fmt.Sprintf(`(() => { const el = [...document.querySelectorAll(%q)].find(e => e.textContent.trim() === %q && !e.disabled && e.offsetParent !== null); if (!el) return false; el.setAttribute('data-click', '1'); return true })()`, sel, text)
		for deadline := time.Now().Add(waitLong); ; time.Sleep(50 * time.Millisecond) {
			ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js))
			if err == nil && ok {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("no %s reading %q to click", sel, text)
			}
		}
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`[data-click="1"]`))); err != nil {
			return err
		}
		_, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { document.querySelectorAll('[data-click]').forEach(e => e.removeAttribute('data-click')); return true })()`))
		return err
	})
}

// navigate loads url (a hash route of the dashboard: the page reloads only
// when the path changes).
func navigate(url string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := chromedp.Run(ctx, chromedp.Evaluate[bool](fmt.Sprintf(`(() => { location.href = %q; return true })()`, url)))
		return err
	})
}
