package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/exocortex/exocortex/config"
	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/core/session"
	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/memory/natsjournal"
	"github.com/exocortex/exocortex/memory/natsjournal/natssession"
	"github.com/exocortex/exocortex/memory/natsjournal/natstest"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/replay"
)

// TestMemoryMigrateMovesSessions: migrate --to nats://… moves the home's
// session files into the stream's sessions bucket with the journal
// (verified: count and content hash; progress on stderr; a re-run copies
// nothing), where another host opens them; migrate --to DIR brings the
// bucket's sessions back to files, with what the other host added.
func TestMemoryMigrateMovesSessions(t *testing.T) {
	ctx := context.Background()
	srv := natstest.Start(t)
	home := t.TempDir()
	t.Setenv("EXOCORTEX_HOME", home)
	t.Setenv(GloVeEnv, "")
	t.Setenv(config.EnvEmbedder, "none")
	t.Setenv("EXOCORTEX_NATS_URL", "")
	for _, name := range []string{"ops", "release.v2"} {
		s, err := session.Open(ctx, filepath.Join(home, "sessions"), name)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Append(ctx, &exocortexv1.Message{Role: "user", Content: "begun in " + name}); err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
	// ops has a recorded turn, as a terminal or serve leaves it.
	rec, err := replay.NewRecorder(filepath.Join(home, "sessions", "ops.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for _, e := range []loop.Event{
		{Type: loop.EventMonologueStart, Time: now, Text: "begun in ops"},
		{Type: loop.EventRequest, Time: now, Iteration: 1, Request: &loop.Request{System: "sys", Messages: []loop.RequestMessage{{Role: "user", Part: loop.PartHistory, Content: "begun in ops"}}}},
		{Type: loop.EventLLMReply, Time: now, Iteration: 1, Text: "noted"},
		{Type: loop.EventMonologueEnd, Time: now},
	} {
		rec.Observe(e)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "", "add", "the deploy runs from the blue pipeline")

	type report struct {
		memory.MigrateReport
		Sessions *natssession.MigrateReport `json:"sessions"`
	}
	var rep report
	out, stderr, err := runMemory(t, "", "migrate", "--json", "--to", srv.URL())
	if err != nil {
		t.Fatalf("migrate: %v\n%s", err, stderr)
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if s := rep.Sessions; !rep.Verified || s == nil || !s.Verified || s.Sessions != 2 || s.Records != 4 || s.Copied != 4 || s.Hash == "" ||
		!strings.Contains(s.To, "bucket EXO_MEMORY_SESSIONS") || s.RecordingLines != 4 {
		t.Fatalf("migrate --json: %+v, sessions %+v", rep.MigrateReport, rep.Sessions)
	}
	if !strings.Contains(stderr, "migrate: 2 of 2 sessions") {
		t.Fatalf("no progress for the sessions on stderr:\n%s", stderr)
	}
	hash := rep.Sessions.Hash
	var again report
	if err := json.Unmarshal([]byte(mustRun(t, "", "migrate", "--json", "--to", srv.URL())), &again); err != nil {
		t.Fatal(err)
	}
	if s := again.Sessions; s == nil || !s.Verified || s.Copied != 0 || s.RecordingLines != 0 || s.Hash != hash {
		t.Fatalf("migrate again: %+v", again.Sessions)
	}
	text := mustRun(t, "", "migrate", "--to", srv.URL())
	if !strings.Contains(text, "migrated 2 sessions, 4 records (0 copied)") || !strings.Contains(text, hash) {
		t.Fatalf("migrate again:\n%s", text)
	}

	// Another host on the stream continues a migrated session.
	cfg, err := natsjournal.ParseURL(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	cfg.Logger = slog.New(slog.DiscardHandler)
	other, err := natssession.Open(ctx, cfg, filepath.Join(t.TempDir(), "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	s, err := other.Open(ctx, "release.v2")
	if err != nil {
		t.Fatal(err)
	}
	if h := s.History(); len(h) != 1 || h[0].GetContent() != "begun in release.v2" {
		t.Fatalf("the migrated session on another host: %v", h)
	}
	// ops's recorded turn is there for the other host's inspector.
	shared := filepath.Join(t.TempDir(), "ops.replay")
	if err := replay.Sync(ctx, other, "ops", shared); err != nil {
		t.Fatal(err)
	}
	if got, err := replay.Load(shared); err != nil || len(got.Turns) != 1 || got.Turns[0].Iterations[0].Request.Messages[0].Content != "begun in ops" {
		t.Fatalf("the migrated recording on another host: %+v, %v", got, err)
	}
	if err := s.Append(ctx, &exocortexv1.Message{Role: "user", Content: "continued on the other host"}); err != nil {
		t.Fatal(err)
	}

	// Back to files, in a directory of its own.
	back, sessions := filepath.Join(t.TempDir(), "mem"), filepath.Join(t.TempDir(), "sessions")
	if err := json.Unmarshal([]byte(mustRun(t, "", "migrate", "--json", "--from", srv.URL(), "--to", back, "--sessions-dir", sessions)), &rep); err != nil {
		t.Fatal(err)
	}
	if s := rep.Sessions; !rep.Verified || s == nil || !s.Verified || s.Sessions != 2 || s.Records != 5 || s.Copied != 5 {
		t.Fatalf("migrate --to DIR: %+v, sessions %+v", rep.MigrateReport, rep.Sessions)
	}
	f, err := session.Open(ctx, sessions, "release.v2")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if h := f.History(); len(h) != 2 || h[1].GetContent() != "continued on the other host" || f.ID() != s.ID() {
		t.Fatalf("the session file migrated back: %v", h)
	}
	// --no-sessions leaves them alone.
	var journalOnly report
	if err := json.Unmarshal([]byte(mustRun(t, "", "migrate", "--json", "--no-sessions", "--to", srv.URL())), &journalOnly); err != nil || journalOnly.Sessions != nil {
		t.Fatalf("migrate --no-sessions: %+v, %v", journalOnly, err)
	}
}

// TestMemoryStatsNamesThePromoter: on a journal whose writes go through a
// promoter, memory stats says so while none holds the lease, then names
// the one that took it; the journal's location and the lag are there too.
func TestMemoryStatsNamesThePromoter(t *testing.T) {
	srv := natstest.Start(t)
	t.Setenv("EXOCORTEX_HOME", t.TempDir())
	t.Setenv(GloVeEnv, "")
	t.Setenv(config.EnvEmbedder, "none")
	t.Setenv("EXOCORTEX_NATS_URL", "")
	dir := "--dir=" + filepath.Join(t.TempDir(), "a")
	mustRun(t, "", "add", dir, "the deploy runs from the blue pipeline")
	mustRun(t, "", "migrate", dir, "--no-sessions", "--to", srv.URL())
	url := srv.URL() + "?promoter=true"
	t.Setenv("EXOCORTEX_NATS_URL", url)
	if text := mustRun(t, "", "stats", dir); !strings.Contains(text, "promoter:   none holds the lease: writes wait for one") {
		t.Fatalf("stats before any promoter:\n%s", text)
	}

	cfg, err := natsjournal.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Logger = slog.New(slog.DiscardHandler)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- natsjournal.RunPromoter(ctx, natsjournal.PromoterConfig{Journal: cfg, Dir: t.TempDir(), ID: "promoter-on-b", Logger: cfg.Logger})
	}()
	t.Cleanup(func() { cancel(); <-done })
	mustRun(t, "", "add", dir, "Mira is on call this week") // acknowledged once the promoter stored it

	var st struct {
		Journal  string               `json:"journal"`
		Shared   *memory.SharedStatus `json:"shared"`
		Promoted bool                 `json:"promoted"`
	}
	end := time.Now().Add(10 * time.Second)
	for {
		if err := json.Unmarshal([]byte(mustRun(t, "", "stats", dir, "--json")), &st); err != nil {
			t.Fatal(err)
		}
		if st.Shared != nil && st.Shared.Promoter != "" || time.Now().After(end) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if st.Shared == nil || st.Shared.Promoter != "promoter-on-b" || !st.Promoted || st.Shared.Lag != 0 || st.Shared.StreamSeq != 2 ||
		!strings.Contains(st.Journal, srv.URL()) {
		t.Fatalf("stats --json with a promoter: journal %q, promoted %v, shared %+v", st.Journal, st.Promoted, st.Shared)
	}
	text := mustRun(t, "", "stats", dir)
	for _, want := range []string{"shared:     " + srv.URL(), "lag 0", "promoter:   promoter-on-b"} {
		if !strings.Contains(text, want) {
			t.Fatalf("stats with a promoter lacks %q:\n%s", want, text)
		}
	}
}
