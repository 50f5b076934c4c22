package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/config"
	"github.com/exocortex/exocortex/memory/embed"
)

// TestMemorySummaryNamesTheEmbedder checks the welcome card's memory line names
// the embedder a session's store will use while the store has no vectors of
// its own to name: the table built into the binary when no full word-vector
// file is found, the file's path when one is, and "none" when configured so.
func TestMemorySummaryNamesTheEmbedder(t *testing.T) {
	home := t.TempDir()
	t.Setenv(embed.GloVeEnv, "")
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	t.Setenv(config.EnvEmbedder, "")
	e := NewEngine(Config{MemoryDir: filepath.Join(home, "memory")})
	full := filepath.Join(home, embed.GloVeFile)
	for _, tc := range []struct {
		name, embedder string
		file           bool
		want           string
	}{
		{"built in", "", false, "embedder glove (compact, 50k words, built in) (configured)"},
		{"none", "none", false, "embedder none (BM25 only) (configured)"},
		{"full file in the home", "", true, "embedder glove (" + full + ") (configured)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(config.EnvEmbedder, tc.embedder)
			if tc.file {
				if err := os.WriteFile(full, []byte("only its presence is checked"), 0o644); err != nil {
					t.Fatal(err)
				}
				defer os.Remove(full)
			}
			if got := e.MemorySummary(t.Context()); !strings.HasSuffix(got, tc.want) {
				t.Errorf("MemorySummary = %q, want it to end %q", got, tc.want)
			}
		})
	}
}
