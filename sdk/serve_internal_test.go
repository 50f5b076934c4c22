package sdk

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"
)

func TestWatchParentNoticesReparenting(t *testing.T) {
	var ppid atomic.Int64
	ppid.Store(4242)
	gone := make(chan struct{})
	go watchParent(t.Context(), int(ppid.Load()), func() int { return int(ppid.Load()) }, time.Millisecond, func() { close(gone) })

	select {
	case <-gone:
		t.Fatal("gone called while the parent is unchanged")
	case <-time.After(20 * time.Millisecond):
	}
	ppid.Store(1) // re-parented to init
	select {
	case <-gone:
	case <-time.After(5 * time.Second):
		t.Fatal("gone not called after the parent changed")
	}
}

func TestWatchParentStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		watchParent(ctx, 7, func() int { return 7 }, time.Millisecond, func() { t.Error("gone called") })
		close(done)
	}()
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("watchParent did not return after its context ended")
	}
}

func TestHostLogHandlerWritesHclogJSON(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(NewHostLogHandler(&buf, "myplugin"))
	log.Debug("hidden")
	log.With("extension", "e").Warn("careful", "n", 2, slog.Group("g", "time", "inner"))

	var rec map[string]any
	if err := json.Unmarshal(bytes.TrimSpace(buf.Bytes()), &rec); err != nil {
		t.Fatalf("not one JSON line: %q: %v", buf.String(), err)
	}
	ts, _ := rec["@timestamp"].(string)
	if _, err := time.Parse(hclogTimeFormat, ts); err != nil {
		t.Errorf("@timestamp %q does not parse as go-plugin expects: %v", ts, err)
	}
	want := map[string]any{"@level": "warn", "@message": "careful", "@module": "myplugin", "extension": "e", "n": float64(2)}
	for k, v := range want {
		if rec[k] != v {
			t.Errorf("%s = %v, want %v (record %v)", k, rec[k], v, rec)
		}
	}
	if g, _ := rec["g"].(map[string]any); g["time"] != "inner" {
		t.Errorf("grouped attribute renamed: %v", rec["g"])
	}
}
