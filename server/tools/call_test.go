package tools

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/exocortex/exocortex/core/host"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// TestRegisteredToolsRunOnTheHost: the registry, added to a real host as a
// tool provider, gives the agent its registered tools beside the hello
// plugin's, and Host.ExecuteTool calls their endpoints (a real HTTP server):
// each kind of answer becomes the result the model reads, and a missed
// deadline is a TimedOut call error.
func TestRegisteredToolsRunOnTheHost(t *testing.T) {
	h := helloHost(t)
	reg, err := Open(filepath.Join(t.TempDir(), File), FromHost(h))
	if err != nil {
		t.Fatal(err)
	}
	h.AddToolProvider(reg)
	ep := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/string":
			_, _ = w.Write([]byte(`"it is sunny"`))
		case "/object":
			_, _ = w.Write([]byte("{\n  \"t\": 21\n}"))
		case "/text":
			_, _ = w.Write([]byte("plain words\n"))
		case "/fail":
			http.Error(w, "the city is unknown", http.StatusNotFound)
		case "/big":
			_, _ = w.Write([]byte(strings.Repeat("x", MaxResultBytes+1)))
		case "/slow":
			select {
			case <-r.Context().Done():
			case <-time.After(30 * time.Second):
			}
		}
	}))
	defer ep.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()

	tests := []struct {
		id, endpoint     string
		content, errText string
		kind             host.FailureKind
	}{
		{id: "w.string", endpoint: ep.URL + "/string", content: "it is sunny"},
		{id: "w.object", endpoint: ep.URL + "/object", content: `{"t":21}`},
		{id: "w.text", endpoint: ep.URL + "/text", content: "plain words"},
		{id: "w.fail", endpoint: ep.URL + "/fail", errText: "answered HTTP 404: the city is unknown"},
		{id: "w.big", endpoint: ep.URL + "/big", errText: "larger than 1048576 bytes, so none of it was passed on"},
		{id: "w.slow", endpoint: ep.URL + "/slow", kind: host.TimedOut},
		{id: "w.down", endpoint: closed.URL, kind: host.Returned},
	}
	ctx := context.Background()
	for _, tt := range tests {
		d := Definition{ID: tt.id, Name: tt.id, Description: "A test tool.", Parameters: []byte(`{"type":"object"}`), Returns: []byte(`{"type":"string"}`),
			Endpoint: tt.endpoint, Version: "1", Agent: "w"}
		if _, err := reg.Register(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	for _, tl := range h.Tools() {
		names = append(names, tl.Spec.GetName()+"@"+tl.ProviderName())
	}
	if got := strings.Join(names, " "); !strings.Contains(got, "hello_time@hello") || !strings.Contains(got, "w.string@tool registry") {
		t.Fatalf("the host's tools: %s", got)
	}
	if n := len(reg.List(ctx, "", "")); n != len(tests)+1 {
		t.Errorf("the registry lists %d tools, want %d (the registered ones once, not again as the host's)", n, len(tests)+1)
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			tool, ok := h.Tool(tt.id)
			if !ok {
				t.Fatalf("the host has no tool %s", tt.id)
			}
			resp, err := h.ExecuteTool(ctx, tool, &exocortexv1.ExecuteToolRequest{ToolCall: &exocortexv1.ToolCall{Name: tt.id, ArgsJson: `{"city":"Paris"}`}}, 500*time.Millisecond)
			if tt.kind != "" {
				var ce *host.CallError
				if !errors.As(err, &ce) || ce.Kind != tt.kind || !strings.Contains(ce.Error(), "tool registry") {
					t.Fatalf("got %v (%T), want a %s call error naming the tool registry", err, err, tt.kind)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			r := resp.GetResult()
			if r.GetContent() != tt.content || !strings.Contains(r.GetError(), tt.errText) || (tt.errText == "") != (r.GetError() == "") {
				t.Errorf("result %q, error %q; want %q, %q", r.GetContent(), r.GetError(), tt.content, tt.errText)
			}
		})
	}
	if err := reg.Remove(ctx, "w.text"); err != nil {
		t.Fatal(err)
	}
	if _, ok := h.Tool("w.text"); ok {
		t.Error("a removed tool is still the agent's")
	}
}
