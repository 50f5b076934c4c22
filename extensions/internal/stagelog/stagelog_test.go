package stagelog

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
)

func TestConcurrentAppendersAndRead(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sub", StagingFile)
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if _, err := Append(ctx, path, []Entry{{Kind: KindInsight, Session: "s", Payload: map[string]int{"i": i}}}, nil); err != nil {
				t.Error(err)
			}
		}(i)
	}
	wg.Wait()
	n := 0
	if err := Read(ctx, path, 0, func(r Record) error {
		if r.Kind != KindInsight {
			t.Errorf("kind %q", r.Kind)
		}
		n++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n != 4 {
		t.Fatalf("%d records, want 4", n)
	}
	if err := Read(ctx, filepath.Join(t.TempDir(), "missing.jsonl"), 0, func(Record) error { return nil }); err != nil {
		t.Fatalf("missing file: %v", err)
	}
}
