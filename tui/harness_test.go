package tui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/exocortex/exocortex/core/discover"
	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/core/llm"
	"github.com/exocortex/exocortex/core/llm/scripted"
	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/core/wirecheck"
	"github.com/exocortex/exocortex/prompts"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// The tests run the real parts: the gate plugin (testdata/gate) in its own
// process, the agent loop, a session file, and the scripted server speaking
// Ollama's protocol. The Bubble Tea program is Charm's teatest harness.

// reply builds a scripted reply that calls tool with args, in the JSON
// reply format.
func reply(headline, tool, args string) scripted.Reply {
	return scripted.Reply{Content: `{"thoughts":["step"],"headline":"` + headline + `","tool_name":"` + tool + `","tool_args":` + args + `}`}
}

func answer(text string) scripted.Reply {
	return reply("Answering", "response", `{"text":"`+text+`"}`)
}

// env is a home directory with the gate plugin installed.
type env struct {
	home, plugins, work string
	// wiring, when set, is the host's wiring check (it keeps out a plugin
	// with a wiring error).
	wiring wirecheck.Func
}

// newEnv installs the gate plugin and the extra ones named (directories of
// testdata).
func newEnv(t *testing.T, extra ...string) env {
	t.Helper()
	e := env{home: t.TempDir(), work: t.TempDir()}
	e.plugins = filepath.Join(e.home, "plugins")
	if err := os.MkdirAll(e.plugins, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range append([]string{"gate"}, extra...) {
		bin := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/tui/testdata/"+name)
		if err := os.Rename(bin, filepath.Join(e.plugins, name)); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

// engine builds an engine on a scripted model with the given replies. The
// server is returned to check what the model was sent.
func (e env) engine(t *testing.T, session string, replies ...scripted.Reply) (*Engine, *scripted.Server) {
	t.Helper()
	srv, err := scripted.NewServer(scripted.Script{Source: t.Name(), Replies: replies})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	client, err := llm.New(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	return e.engineWith(t, session, client, srv.Model(), "script:test"), srv
}

// engineOn builds an engine on a scripted server of the given protocol
// (llm.ProviderOllama or llm.ProviderOpenAI).
func (e env) engineOn(t *testing.T, provider, session string, replies ...scripted.Reply) (*Engine, scripted.Running) {
	t.Helper()
	srv, err := scripted.Start(provider, scripted.Script{Source: t.Name(), Replies: replies})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	// Retries reach the engine as the command wires them (app.retryNotice).
	var eng *Engine
	client, err := llm.Open(llm.Config{Provider: provider, BaseURL: srv.URL(), OnRetry: func(r llm.Retry) { eng.Retried(r) }})
	if err != nil {
		t.Fatal(err)
	}
	eng = e.engineWith(t, session, client, srv.Model(), "script:test")
	return eng, srv
}

func (e env) engineWith(t *testing.T, session string, client llm.Provider, model, scriptedAs string) *Engine {
	loader := prompts.NewLoader()
	eng := NewEngine(Config{
		Model: model, Address: client.BaseURL(), Provider: client.Name(), Scripted: scriptedAs, LLM: client, NumCtx: 8192,
		StartHost: func(ctx context.Context, onEvent func(host.Event)) (*host.Host, error) {
			h, err := host.New(ctx, host.Options{Dirs: []discover.Dir{{Path: e.plugins, Source: discover.User}}, WiringCheck: e.wiring,
				OnEvent: onEvent, WatchDebounce: 50 * time.Millisecond})
			if err != nil {
				return nil, err
			}
			return h, h.Watch(ctx)
		},
		NewAgent: func(s AgentSpec) (*loop.Agent, error) {
			return loop.New(loop.Options{
				Host: s.Host, LLM: client, Prompts: loader, Model: s.Model, Session: s.Session,
				ApprovalMode: s.Mode, Approver: s.Approver, Observer: s.Observer,
			})
		},
		Prompts:     loader,
		SessionsDir: filepath.Join(e.home, "sessions"), Session: session,
		HistoryFile: filepath.Join(e.home, "history.jsonl"),
		MemoryDir:   filepath.Join(e.home, "memory"),
		WorkDir:     e.work,
	})
	t.Cleanup(eng.Close)
	return eng
}

// ui is a running program around a Model.
type ui struct {
	t  *testing.T
	tm *teatest.TestModel
}

// inspectMsg runs fn on the model inside the program's event loop, where
// reading the model is not a race.
type inspectMsg struct {
	fn   func(*Model)
	done chan struct{}
}

func start(t *testing.T, eng *Engine) *ui {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	m, err := New(ctx, eng)
	if err != nil {
		t.Fatal(err)
	}
	filter := func(_ tea.Model, msg tea.Msg) tea.Msg {
		if im, ok := msg.(inspectMsg); ok {
			im.fn(m)
			close(im.done)
			return nil
		}
		return msg
	}
	u := &ui{t: t, tm: teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 30), teatest.WithProgramOptions(tea.WithFilter(filter)))}
	t.Cleanup(func() {
		_ = u.tm.Quit()
		u.tm.WaitFinished(t, teatest.WithFinalTimeout(20*time.Second))
	})
	u.waitFor("the welcome card", func(m *Model) bool { return m.boot.welcomed })
	return u
}

// deadline is generous: the machine may be a loaded 2-core box.
const deadline = 30 * time.Second

func (u *ui) inspect(fn func(*Model)) {
	u.t.Helper()
	done := make(chan struct{})
	u.tm.Send(inspectMsg{fn: fn, done: done})
	select {
	case <-done:
	case <-time.After(deadline):
		u.t.Fatal("the program did not answer an inspection")
	}
}

// waitFor polls the model until cond holds.
func (u *ui) waitFor(what string, cond func(*Model) bool) {
	u.t.Helper()
	end := time.Now().Add(deadline)
	for {
		ok := false
		u.inspect(func(m *Model) { ok = cond(m) })
		if ok {
			return
		}
		if time.Now().After(end) {
			var printed string
			u.inspect(func(m *Model) { printed = m.Printed() + "\n--- live ---\n" + m.View().Content })
			u.t.Fatalf("timed out waiting for %s; the screen:\n%s", what, printed)
		}
		time.Sleep(15 * time.Millisecond)
	}
}

// waitPrinted waits until the printed output contains each of wants.
func (u *ui) waitPrinted(wants ...string) {
	u.t.Helper()
	u.waitFor("output with "+strings.Join(wants, ", "), func(m *Model) bool {
		p := plain(m.Printed())
		for _, w := range wants {
			if !strings.Contains(p, w) {
				return false
			}
		}
		return true
	})
}

// resumed quits the program and closes eng, then opens session again in a
// new engine on the same home, and waits for the resumed transcript.
func (u *ui) resumed(e env, eng *Engine, session string) *ui {
	u.t.Helper()
	u.submit("/quit")
	u.tm.WaitFinished(u.t, teatestTimeout())
	eng.Close()
	eng2, _ := e.engine(u.t, session)
	u2 := start(u.t, eng2)
	u2.waitPrinted("resumed: 1 turn")
	return u2
}

func (u *ui) idle() {
	u.t.Helper()
	u.waitFor("the turn to end", func(m *Model) bool { return m.turn == nil && len(m.queue) == 0 })
}

func (u *ui) printed() string {
	var s string
	u.inspect(func(m *Model) { s = plain(m.Printed()) })
	return s
}

func (u *ui) view() string {
	var s string
	u.inspect(func(m *Model) { s = plain(m.View().Content) })
	return s
}

func (u *ui) input() string {
	var s string
	u.inspect(func(m *Model) { s = m.input.Value() })
	return s
}

func (u *ui) typeText(s string) { u.tm.Type(s) }

func (u *ui) key(k tea.KeyPressMsg) { u.tm.Send(k) }

func (u *ui) submit(s string) {
	u.typeText(s)
	u.key(enter)
}

var (
	enter     = tea.KeyPressMsg{Code: tea.KeyEnter}
	up        = tea.KeyPressMsg{Code: tea.KeyUp}
	down      = tea.KeyPressMsg{Code: tea.KeyDown}
	tab       = tea.KeyPressMsg{Code: tea.KeyTab}
	esc       = tea.KeyPressMsg{Code: tea.KeyEscape}
	backspace = tea.KeyPressMsg{Code: tea.KeyBackspace}
	ctrlC     = tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	ctrlD     = tea.KeyPressMsg{Code: 'd', Mod: tea.ModCtrl}
	ctrlJ     = tea.KeyPressMsg{Code: 'j', Mod: tea.ModCtrl}
	ctrlR     = tea.KeyPressMsg{Code: 'r', Mod: tea.ModCtrl}
	ctrlO     = tea.KeyPressMsg{Code: 'o', Mod: tea.ModCtrl}
	shiftTab  = tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
	shiftEnt  = tea.KeyPressMsg{Code: tea.KeyEnter, Mod: tea.ModShift}
)

var left = tea.KeyPressMsg{Code: tea.KeyLeft}

func teatestTimeout() teatest.FinalOpt { return teatest.WithFinalTimeout(deadline) }

func pasteMsg(s string) tea.PasteMsg { return tea.PasteMsg{Content: s} }
