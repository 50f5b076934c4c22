package openai

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/server/route"
	"github.com/exocortex/exocortex/server/sessions"
)

// keepAlive is how often a quiet stream gets an SSE comment, so proxies and
// clients do not drop it while a tool runs.
const keepAlive = 15 * time.Second

// stream runs the turn and writes it as server-sent events.
func (a *API) stream(w http.ResponseWriter, r *http.Request, c completion, turn sessions.Turn) {
	rc := http.NewResponseController(w)
	var mu sync.Mutex
	started := false
	send := func(v any) {
		b, _ := json.Marshal(v)
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(w, "data: %s\n\n", b)
		_ = rc.Flush()
	}
	begin := func(l *sessions.Live) {
		mu.Lock()
		w.Header().Set(SessionHeader, l.Name())
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		started = true
		mu.Unlock()
		send(c.chunk(Delta{Role: "assistant", Content: new(string)}, nil))
	}
	turn.Before = begin
	turn.OnEvent = func(e loop.Event) {
		if p := sessions.Progress(e); p != "" {
			send(c.chunk(Delta{ReasoningContent: p + "\n"}, nil))
		} else if e.Type == loop.EventNotice && e.Text != "" && e.Agent == "" {
			send(c.chunk(Delta{ReasoningContent: e.Text + "\n"}, nil))
		}
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(keepAlive)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				mu.Lock()
				if started {
					fmt.Fprint(w, ": keep-alive\n\n")
					_ = rc.Flush()
				}
				mu.Unlock()
			}
		}
	}()
	_, res, err := a.m.Run(r.Context(), turn)
	close(done)
	mu.Lock()
	ok := started
	mu.Unlock()
	if !ok {
		fail(w, err)
		return
	}
	if res == nil {
		// The stream has begun: the error goes in it, as OpenAI's servers send one.
		send(map[string]any{"error": map[string]string{"message": err.Error(), "code": route.CodeTurnFailed}})
	} else {
		send(c.chunk(Delta{Content: &res.Response}, nil))
		reason := finish(res)
		send(c.chunk(Delta{}, &reason))
	}
	mu.Lock()
	fmt.Fprint(w, "data: [DONE]\n\n")
	_ = rc.Flush()
	mu.Unlock()
}
