package natsjournal

import (
	"context"
	"fmt"
	"testing"

	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/memory/natsjournal/natstest"
	"github.com/exocortex/exocortex/staging"
)

// TestPromoterReplicaFile: the promoter's replica file takes records in
// sequence only, passes over those it holds, fills a gap from the stream,
// copies the stream's tail, and keeps what it holds across a reopen.
func TestPromoterReplicaFile(t *testing.T) {
	srv := natstest.Start(t)
	ctx := context.Background()
	j, err := Open(ctx, config(t, srv.URL()+"?stream=REP&subject=rep", false))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	var es []staging.Entry
	for i := range 10 {
		es = append(es, staging.Entry{Kind: memory.KindUpsert, Payload: memory.UpsertEvent{ID: fmt.Sprintf("r%d", i+1), Area: memory.AreaMain, Text: fmt.Sprintf("note %d", i+1)}})
	}
	recs, err := j.Append(ctx, es, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rep, err := openReplica(ctx, dir, j, quiet())
	if err != nil {
		t.Fatal(err)
	}
	rep.setFollowing(false)
	for _, tc := range []struct {
		name string
		give []staging.Record
		want uint64
	}{
		{"in sequence", recs[0:3], 3},
		{"held ones passed over", recs[1:4], 4},
		{"a duplicate's earlier sequence in the middle", []staging.Record{recs[4], recs[0], recs[5]}, 6},
		{"a gap filled from the stream", recs[8:9], 9},
		{"nothing new", recs[2:5], 9},
	} {
		if err := rep.appendRecs(ctx, tc.give); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := rep.seq(); got != tc.want {
			t.Fatalf("%s: the file holds up to %d, want %d", tc.name, got, tc.want)
		}
	}
	if err := rep.copyTail(ctx); err != nil || rep.seq() != 10 {
		t.Fatalf("copying the tail: %v, holds %d", err, rep.seq())
	}
	check := func(r *replica) {
		t.Helper()
		var n uint64
		if err := r.read(ctx, 0, func(got staging.Record) error {
			n++
			want := recs[n-1]
			if got.Seq != n || got.Kind != want.Kind || string(got.Payload) != string(want.Payload) || !got.TS.Equal(want.TS) {
				t.Fatalf("record %d: %+v, want %+v", n, got, want)
			}
			return nil
		}); err != nil || n != 10 {
			t.Fatalf("reading the file: %v, %d records", err, n)
		}
	}
	check(rep)
	if err := rep.close(); err != nil {
		t.Fatal(err)
	}
	rep, err = openReplica(ctx, dir, j, quiet())
	if err != nil {
		t.Fatal(err)
	}
	defer rep.close()
	check(rep)
}
