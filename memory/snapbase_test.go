package memory

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// decodedRecords counts the base records a state has decoded so far.
func decodedRecords(st *State) int {
	n := 0
	for i := range st.slots {
		if st.slots[i].Load() != nil {
			n++
		}
	}
	return n
}

// orderIDs lists the ids of an order's places.
func orderIDs(o *order) []string {
	ids := make([]string, o.size())
	for p := range ids {
		ids[p], _ = o.at(p)
	}
	return ids
}

// snapRecordAt returns the byte of the snapshot file in dir at which record
// id's encoding starts, and the snapshot's header.
func snapRecordAt(t *testing.T, dir, id string) (int, snapshotHeader) {
	t.Helper()
	p := filepath.Join(dir, SnapshotFile)
	f, err := openSnapshot(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := f.decode()
	if err != nil || snap.state.base == nil {
		t.Fatalf("the snapshot is not a version 2 file: %v", err)
	}
	i, ok := snap.state.base.find(id)
	if !ok {
		t.Fatalf("record %s is not in the snapshot", id)
	}
	b, _ := os.ReadFile(p)
	return bytes.IndexByte(b, '\n') + 1 + snap.state.base.off(i), f.h
}

// TestSnapshotOnDemand: a store opened from a version 2 snapshot decodes no
// record to open, decodes only what a search or a lookup reads, keeps the
// creation order the snapshot holds (the one a fresh sort gives), and every
// kind of write after the open (new records, an update by key, a delete, an
// id created again, archive, restore, access, merge) lands on the mapped
// records as a replay of the journal would; Close writes them back.
func TestSnapshotOnDemand(t *testing.T) {
	dir := t.TempDir()
	richStore(t, dir, newHashEmbedder())
	ctx := context.Background()
	s := openStore(t, dir, Options{Embedder: newHashEmbedder()})
	if s.state.base == nil {
		t.Fatal("the store was not opened from a version 2 snapshot")
	}
	if n := decodedRecords(s.state); n != 0 {
		t.Errorf("Open decoded %d records, want none", n)
	}
	// Filters read the records in place: a census decodes none, a list only
	// what it returns; both count what the journal's replay holds.
	replayedSt := replayedState(t, dir)
	for _, f := range []Filter{{Statuses: []Status{StatusActive, StatusArchived}}, {Tags: []string{"pref"}}, {Areas: []string{AreaMain}}} {
		want := map[string]Census{}
		nwant := 0
		replayedSt.each(func(r *Record) bool {
			if f.match(r) {
				c := want[r.Area]
				if c.Tags == nil {
					c.Tags = map[string]int{}
				}
				c.Records++
				for _, tg := range r.Tags {
					c.Tags[tg]++
				}
				want[r.Area] = c
				nwant++
			}
			return true
		})
		before := decodedRecords(s.state)
		if got := must(s.Census(context.Background(), f)); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("Census(%+v) = %v, want %v", f, got, want)
		}
		if n := decodedRecords(s.state); n != before {
			t.Errorf("Census(%+v) decoded %d records", f, n-before)
		}
		if got := must(s.List(context.Background(), f)); len(got) != nwant {
			t.Errorf("List(%+v): %d records, want %d", f, len(got), nwant)
		}
	}
	if n, all := decodedRecords(s.state), s.state.Len(); n >= all {
		t.Errorf("the filters decoded %d of %d records", n, all)
	}
	if ids := hitIDs(must(s.Search(ctx, "support group", SearchOptions{Limit: 1}))); len(ids) == 0 || ids[0] != "meta" {
		t.Errorf("search: %v", ids)
	}
	if n := decodedRecords(s.state); n == 0 {
		t.Error("a search decoded no record")
	}
	s.mu.RLock()
	s.ord.ensure(s.state)
	got := orderIDs(&s.ord)
	s.mu.RUnlock()
	var fresh order
	replayed := replayedState(t, dir)
	fresh.ensure(replayed)
	if want := orderIDs(&fresh); !slices.Equal(got, want) {
		t.Errorf("creation order from the snapshot %v, a fresh sort %v", got, want)
	}

	src := Source{Session: "s3", Source: "test"}
	steps := []func() error{
		func() error {
			_, err := s.Put(ctx, Input{ID: "tail", Text: "written after the open about zebras"}, src)
			return err
		},
		func() error {
			_, err := s.Put(ctx, Input{Key: "user_theme", Text: "The user now prefers a light theme"}, src)
			return err
		},
		func() error { return s.Delete(ctx, "coffee", "test", src) },
		func() error {
			_, err := s.Put(ctx, Input{ID: "coffee", Text: "Coffee again, green tea too"}, src)
			return err
		},
		func() error { return s.Restore(ctx, "deploy", "test", src) },
		func() error { return s.Archive(ctx, "meta", "test", "", src) },
		func() error { return s.RecordAccess(ctx, []string{"old", "tail"}, src) },
		func() error { return s.Merge(ctx, MergeEvent{Into: "old", From: []string{"tail"}, Source: src}) },
		func() error { return s.Delete(ctx, "db", "test", src) },
	}
	for i, step := range steps {
		if err := step(); err != nil {
			t.Fatalf("step %d: %v", i+1, err)
		}
	}
	want := replayedHash(t, dir)
	if got := must(s.Hash(context.Background())); got != want {
		t.Fatalf("state after writes over the snapshot %s, journal replay %s", got, want)
	}
	if r, ok := must2(s.GetByKey(context.Background(), AreaMain, "user_theme")); !ok || r.ID != "theme" || !strings.Contains(r.Text, "light") {
		t.Errorf("key lookup after an update: %+v %v", r, ok)
	}
	if _, ok := must2(s.Get(context.Background(), "db")); ok {
		t.Error("a deleted snapshot record is still there")
	}
	if r, ok := must2(s.Get(context.Background(), "coffee")); !ok || r.Text != "Coffee again, green tea too" {
		t.Errorf("a snapshot record deleted and created again: %+v %v", r, ok)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Close wrote the snapshot (format 2) only if it was due; write it now
	// the way a long session does, and check it in full.
	s = openStore(t, dir, Options{Embedder: newHashEmbedder()})
	s.wmu.Lock()
	s.snapSeq.Store(0)
	s.saveSnapshot()
	s.wmu.Unlock()
	if got := must(s.Hash(context.Background())); got != want {
		t.Errorf("reopened: %s, want %s", got, want)
	}
	s.Close()
	snap, err := readSnapshot(filepath.Join(dir, SnapshotFile))
	if err != nil || snap.version != snapshotVersion {
		t.Fatalf("the rewritten snapshot: %v", err)
	}
	if got := snap.state.Hash(); got != want {
		t.Errorf("the rewritten snapshot holds %s, want %s", got, want)
	}
	s = openStore(t, dir, Options{Embedder: newHashEmbedder()})
	if n := s.Notices(); len(n) > 0 {
		t.Errorf("notices: %q", n)
	}
	if got := must(s.Hash(context.Background())); got != want {
		t.Errorf("opened from the rewritten snapshot: %s, want %s", got, want)
	}
}

// TestSnapshotFormat2Damage damages a version 2 snapshot where each check
// should catch it: what Open checks every time (header, index, counters),
// what only a file not taken on trust gets (the body's checksum), and a
// record damaged in a trusted file, which only reading it finds: the store
// says so naming the file, rebuilds the state from the journal, answers
// correctly, and writes a sound snapshot again.
func TestSnapshotFormat2Damage(t *testing.T) {
	cases := []struct {
		name    string
		damage  func(t *testing.T, dir string, b []byte) []byte
		trusted bool   // the damaged file keeps a stamp in CheckedFile
		notice  string // at open ("" : none at open, found by reading)
	}{
		{"index byte, trusted", func(t *testing.T, dir string, b []byte) []byte {
			_, h := snapRecordAt(t, dir, "meta")
			b[bytes.IndexByte(b, '\n')+1+h.Index.At+3] ^= 0x40
			return b
		}, true, "has an index that fails its checksum"},
		{"header's record count", func(t *testing.T, dir string, b []byte) []byte {
			_, h := snapRecordAt(t, dir, "meta")
			nl := bytes.IndexByte(b, '\n')
			h.Records++
			head, _ := json.Marshal(h)
			return append(append(head, '\n'), b[nl+1:]...)
		}, true, "has an index of"},
		{"header's index place", func(t *testing.T, dir string, b []byte) []byte {
			_, h := snapRecordAt(t, dir, "meta")
			nl := bytes.IndexByte(b, '\n')
			h.Index.At = h.Bytes + 10
			head, _ := json.Marshal(h)
			return append(append(head, '\n'), b[nl+1:]...)
		}, true, "does not fit"},
		{"record, not trusted", func(t *testing.T, dir string, b []byte) []byte {
			at, _ := snapRecordAt(t, dir, "meta")
			b[at+1+len("meta")+1+len("main")] = 0x7f // the text's length
			return b
		}, false, "fails its checksum"},
		{"record, trusted", func(t *testing.T, dir string, b []byte) []byte {
			at, _ := snapRecordAt(t, dir, "meta")
			b[at+1+len("meta")+1+len("main")] = 0x7f
			return b
		}, true, ""},
	}
	for _, tc := range cases {
		for _, read := range []string{"search", "get"} {
			if tc.notice != "" && read == "get" {
				continue
			}
			t.Run(tc.name+"/"+read, func(t *testing.T) {
				dir := t.TempDir()
				richStore(t, dir, newHashEmbedder())
				want := replayedHash(t, dir)
				p := filepath.Join(dir, SnapshotFile)
				b, _ := os.ReadFile(p)
				if err := os.WriteFile(p, tc.damage(t, dir, b), 0o600); err != nil {
					t.Fatal(err)
				}
				if tc.trusted {
					trustFile(t, dir, SnapshotFile)
				}
				s := openStore(t, dir, Options{Embedder: newHashEmbedder()})
				notes := strings.Join(s.Notices(), "\n")
				if tc.notice != "" {
					if !strings.Contains(notes, tc.notice) || !strings.Contains(notes, "rebuilding the state from the journal") {
						t.Fatalf("notices %q, want %q and a rebuild", notes, tc.notice)
					}
				} else {
					if notes != "" {
						t.Fatalf("notices at open %q: the damage was to be found by reading", notes)
					}
					switch read {
					case "search":
						if ids := hitIDs(must(s.Search(context.Background(), "support group", SearchOptions{}))); len(ids) == 0 || ids[0] != "meta" {
							t.Errorf("search over the damaged record: %v", ids)
						}
					case "get":
						if r, ok := must2(s.Get(context.Background(), "meta")); !ok || !strings.Contains(r.Text, "support group") {
							t.Errorf("Get of the damaged record: %+v %v", r, ok)
						}
					}
					notes = strings.Join(s.Notices(), "\n")
					if !strings.Contains(notes, "state snapshot "+p) || !strings.Contains(notes, "rebuilt the state from the journal") {
						t.Errorf("notices %q do not name the snapshot and the rebuild", notes)
					}
				}
				if got := must(s.Hash(context.Background())); got != want {
					t.Errorf("state hash %s, journal replay %s", got, want)
				}
				if st := must(s.Stats(context.Background())); st.SnapshotSeq != st.JournalSeq {
					t.Errorf("snapshot not rewritten: seq %d, journal %d", st.SnapshotSeq, st.JournalSeq)
				}
				if err := s.CheckFulltext(); err != nil {
					t.Error(err)
				}
				s.Close()
				if _, err := readSnapshot(p); err != nil {
					t.Errorf("the rewritten snapshot: %v", err)
				}
				s = openStore(t, dir, Options{Embedder: newHashEmbedder()})
				if n := s.Notices(); len(n) > 0 {
					t.Errorf("notices on the next open: %q", n)
				}
				if got := must(s.Hash(context.Background())); got != want {
					t.Errorf("next open: state hash %s, want %s", got, want)
				}
			})
		}
	}
}
