package stagingnote

import (
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/sdk/sdktest"
	"github.com/exocortex/exocortex/staging"
)

func serve(t *testing.T) (exocortexv1.PluginClient, string) {
	t.Helper()
	home := t.TempDir()
	n := New(func() (string, error) { return home, nil })
	n.logger = slog.New(slog.DiscardHandler)
	client := sdktest.Serve(t, sdk.Plugin{Name: "notes", Version: "test", Tools: []sdk.Tool{n.Tool()}, Files: []*exocortexv1.FileSpec{File()}})
	return client, home
}

func call(t *testing.T, client exocortexv1.PluginClient, args string) *exocortexv1.ToolResult {
	t.Helper()
	hc := sdktest.Call(ToolName)
	hc.Context.AgentProfile = "researcher"
	resp, err := client.ExecuteTool(t.Context(), &exocortexv1.ExecuteToolRequest{Call: hc,
		ToolCall: &exocortexv1.ToolCall{Name: ToolName, ArgsJson: args}})
	if err != nil {
		t.Fatal(err)
	}
	return resp.GetResult()
}

func records(t *testing.T, path string) []staging.Record {
	t.Helper()
	var out []staging.Record
	bad, err := staging.Scan(context.Background(), path, 0, func(r staging.Record) error {
		out = append(out, r)
		return nil
	})
	if err != nil || len(bad) > 0 {
		t.Fatalf("scan %s: %v %v", path, err, bad)
	}
	return out
}

func TestWritesStagingLines(t *testing.T) {
	client, home := serve(t)
	file := filepath.Join(home, FileName)
	res := call(t, client, `{"text":"The build needs Go 1.26.","title":"build","tags":"go, build"}`)
	if res.GetError() != "" || res.GetContent() != "Recorded note #1 in "+file+"." {
		t.Fatalf("note: %q, error %q", res.GetContent(), res.GetError())
	}
	res = call(t, client, `{"kind":"artifact","path":"out/report.pdf","text":"The quarterly report."}`)
	if res.GetError() != "" || !strings.HasPrefix(res.GetContent(), "Recorded artifact #2") {
		t.Fatalf("artifact: %q, error %q", res.GetContent(), res.GetError())
	}
	recs := records(t, file)
	if len(recs) != 2 {
		t.Fatalf("%d records, want 2", len(recs))
	}
	var p Payload
	if err := recs[0].Decode(&p); err != nil {
		t.Fatal(err)
	}
	if recs[0].Kind != KindNote || recs[0].Session != "sdktest-session" || p.Text != "The build needs Go 1.26." ||
		p.Title != "build" || strings.Join(p.Tags, ",") != "go,build" || p.RequestID != "sdktest-request" ||
		p.AgentProfile != "researcher" || p.Tool != ToolName {
		t.Errorf("note record: %+v payload %+v", recs[0], p)
	}
	if err := recs[1].Decode(&p); err != nil {
		t.Fatal(err)
	}
	if recs[1].Kind != KindArtifact || p.Path != "out/report.pdf" {
		t.Errorf("artifact record: %+v payload %+v", recs[1], p)
	}
	raw, _ := json.Marshal(recs[1])
	t.Logf("line: %s", raw)

	for args, want := range map[string]string{
		`{"kind":"memo","text":"x"}`:     `kind "memo"`,
		`{"text":"  "}`:                  `"text" is empty`,
		`{"kind":"artifact","text":"x"}`: `an artifact needs "path"`,
	} {
		if res := call(t, client, args); !strings.Contains(res.GetError(), want) {
			t.Errorf("%s: error %q, want %q", args, res.GetError(), want)
		}
	}
	if n := len(records(t, file)); n != 2 {
		t.Errorf("refused calls wrote records: %d", n)
	}
}

// Another writer holding staging.jsonl: the tool waits for it to let go.
func TestWaitsForTheLock(t *testing.T) {
	client, home := serve(t)
	file := filepath.Join(home, FileName)
	other, err := staging.Open(t.Context(), file, staging.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Append(t.Context(), "note", "cli", map[string]string{"text": "from the other writer"}); err != nil {
		t.Fatal(err)
	}
	done := make(chan *exocortexv1.ToolResult, 1)
	go func() { done <- call(t, client, `{"text":"waited"}`) }()
	select {
	case res := <-done:
		t.Fatalf("the call did not wait for the lock: %q, error %q", res.GetContent(), res.GetError())
	case <-time.After(100 * time.Millisecond):
	}
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}
	res := <-done
	if res.GetError() != "" || !strings.HasPrefix(res.GetContent(), "Recorded note #2") {
		t.Errorf("after release: %q, error %q", res.GetContent(), res.GetError())
	}
}
