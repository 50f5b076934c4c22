package sandbox_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/exocortex/exocortex/sandbox"
)

// TestProbeCached: the first call probes (the launcher really started) and
// keeps the answer; a second call with nothing changed gives the kept answer
// without probing (a status planted in the file comes back); a key that no
// longer matches (another boot, binary or kernel switch) probes again.
func TestProbeCached(t *testing.T) {
	if _, err := os.Stat("/proc/sys/kernel/random/boot_id"); err != nil {
		t.Skip("no boot id here: ProbeCached probes every time")
	}
	file := filepath.Join(t.TempDir(), "run", "sandbox-probe.json")
	want := sandbox.Probe("")
	if got := sandbox.ProbeCached(file, ""); got != want {
		t.Fatalf("first ProbeCached = %+v, Probe = %+v", got, want)
	}
	var kept struct {
		Key    string         `json:"key"`
		Status sandbox.Status `json:"status"`
	}
	b, err := os.ReadFile(file)
	if err != nil || json.Unmarshal(b, &kept) != nil || kept.Status != want || kept.Key == "" {
		t.Fatalf("the kept answer %s (%v), want the key and %+v", b, err, want)
	}
	planted := sandbox.Status{Reason: "planted in the file"}
	for _, c := range []struct {
		name string
		key  string
		want sandbox.Status
	}{
		{"same key: the kept answer, no probe", kept.Key, planted},
		{"another key: probed again", kept.Key + "|changed", want},
	} {
		b, _ := json.Marshal(map[string]any{"key": c.key, "status": planted})
		if err := os.WriteFile(file, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if got := sandbox.ProbeCached(file, ""); got != c.want {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}
