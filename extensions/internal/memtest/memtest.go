// Package memtest serves a plugin under test with memory, as the host serves
// it: a real store in a temporary directory behind the memory service's own
// server (memory/service), reached by the plugin's Call.Memory over the Host
// service's connection (sdktest.ServeMemory). The host's checks of the
// plugin's declarations (uses_memory, memory_write_areas) are tested in
// core/host, with plugin processes.
//
// It is for tests: the extensions themselves never import memory.
package memtest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/memory/service"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// Home is a plugin under test and the memory it is served.
type Home struct {
	// Dir is the home directory ($EXOCORTEX_HOME); the store is Dir/memory.
	Dir string
	// Store is the store the plugin's memory calls reach, for the test's
	// own writes and checks.
	Store  *memory.Store
	Client exocortexv1.PluginClient
}

// Serve opens a store (BM25 alone: no embedder) in a new home and serves p
// with it. The store closes when the test ends.
func Serve(t testing.TB, p sdk.Plugin) *Home {
	t.Helper()
	dir := t.TempDir()
	return ServeIn(t, dir, p)
}

// ServeIn is Serve with the home directory dir.
func ServeIn(t testing.TB, dir string, p sdk.Plugin) *Home {
	t.Helper()
	st, err := memory.Open(context.Background(), filepath.Join(dir, "memory"), memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Error(err)
		}
	})
	return &Home{Dir: dir, Store: st, Client: sdktest.ServeMemory(t, p, service.NewServer(st, "none"))}
}

// Put saves in into the store, as the test's own write (source "test").
func (h *Home) Put(t testing.TB, in memory.Input) *memory.Record {
	t.Helper()
	r, err := h.Store.Put(context.Background(), in, memory.Source{Source: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return r
}
