package service

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// TestOwnerReadsAnswerInProcess: the owner's Search, Compile and Get answer
// what a client's through the socket answer (errors with the same status),
// and they still answer once the owner's socket stops serving, so they do
// not cross it; Stats, which is not one of them, then fails.
func TestOwnerReadsAnswerInProcess(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	home := shortHome(t)
	owner := connect(t, ctx, home)
	client := connect(t, ctx, home)
	rec, err := save(ctx, owner, "the owner writes about lighthouses and their keepers")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := save(ctx, client, "the client writes about submarines"); err != nil {
		t.Fatal(err)
	}
	reads := []struct {
		name string
		call func(exocortexv1.MemoryServiceClient) (proto.Message, error)
	}{
		{"search", func(c exocortexv1.MemoryServiceClient) (proto.Message, error) {
			return c.Search(ctx, &exocortexv1.MemorySearchRequest{Query: "lighthouses keepers", Options: &exocortexv1.MemorySearchOptions{Limit: 5}})
		}},
		{"compile", func(c exocortexv1.MemoryServiceClient) (proto.Message, error) {
			return c.Compile(ctx, &exocortexv1.MemoryCompileRequest{Query: "submarines", TokenBudget: 200})
		}},
		{"get", func(c exocortexv1.MemoryServiceClient) (proto.Message, error) {
			return c.Get(ctx, &exocortexv1.MemoryGetRequest{Id: rec.GetId()})
		}},
		{"get without an id", func(c exocortexv1.MemoryServiceClient) (proto.Message, error) {
			return c.Get(ctx, &exocortexv1.MemoryGetRequest{})
		}},
	}
	answers := make([]proto.Message, len(reads))
	failed := make([]bool, len(reads))
	for i, r := range reads {
		mine, merr := r.call(owner)
		theirs, terr := r.call(client)
		if status.Code(merr) != status.Code(terr) || (merr != nil) != (terr != nil) {
			t.Fatalf("%s: the owner's error %v, the client's %v", r.name, merr, terr)
		}
		if merr == nil && !proto.Equal(mine, theirs) {
			t.Errorf("%s: the owner's answer %v, the client's %v", r.name, mine, theirs)
		}
		answers[i], failed[i] = mine, merr != nil
	}
	owner.own.srv.Stop()
	for i, r := range reads {
		got, err := r.call(owner)
		if (err != nil) != failed[i] || (err == nil && !proto.Equal(got, answers[i])) {
			t.Errorf("%s with the socket stopped: %v, %v; want the answer before", r.name, got, err)
		}
	}
	sctx, scancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer scancel()
	if _, err := owner.Stats(sctx, &exocortexv1.MemoryStatsRequest{}); err == nil {
		t.Error("Stats answered with the owner's socket stopped: it should cross the socket")
	}
}
