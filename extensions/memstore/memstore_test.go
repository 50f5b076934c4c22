package memstore

import (
	"context"
	"testing"
	"time"

	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/staging"
)

func TestOpensLazilyAndReleasesWhenIdle(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	h := New(Options{Home: home, IdleClose: 20 * time.Millisecond})
	defer h.Close()

	if err := h.WithStore(ctx, func(s *memory.Store) error {
		_, err := s.Put(ctx, memory.Input{Text: "the build uses make"}, memory.Source{Source: "test"})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := h.WithStaging(ctx, func(l *staging.Log) error {
		_, err := l.Append(ctx, "note", "s1", map[string]string{"text": "hi"})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	// Once idle, the locks are released: another opener gets the store.
	deadline := time.Now().Add(5 * time.Second)
	for {
		s, err := memory.Open(ctx, h.StoreDir(), memory.Options{})
		if err == nil {
			if n := s.Stats().Records; n != 1 {
				t.Errorf("records = %d, want 1", n)
			}
			s.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the store was not released after idle: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// And the handle reopens on next use.
	if err := h.WithStore(ctx, func(s *memory.Store) error {
		if n := s.Stats().Records; n != 1 {
			t.Errorf("after reopen: records = %d", n)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

func TestHeldWhileInUse(t *testing.T) {
	ctx := context.Background()
	h := New(Options{Home: t.TempDir(), IdleClose: -1})
	defer h.Close()
	err := h.WithStore(ctx, func(*memory.Store) error {
		_, err := memory.Open(ctx, h.StoreDir(), memory.Options{})
		if err == nil {
			t.Error("a second opener got the store while the handle held it")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := memory.Open(ctx, h.StoreDir(), memory.Options{})
	if err != nil {
		t.Fatalf("after Close: %v", err)
	}
	s.Close()
}
