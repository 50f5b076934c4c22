package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/core/llm/scripted"
	"github.com/exocortex/exocortex/protocol"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// refPattern finds the marker each test memory carries ("ref K07").
var refPattern = regexp.MustCompile(`ref K\d\d`)

// TestMemorySearchRanksAsRecall: on a home of three dozen memories, a dozen
// of them about deploying kestrel in varying degree, the recall block the
// agent's model receives for a message lists its memories in the order
// `/memory search` with the same text shows them, in the same session.
func TestMemorySearchRanksAsRecall(t *testing.T) {
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	home, work := t.TempDir(), t.TempDir()
	const query = "how do we deploy the kestrel service"
	topics := []string{
		"Deploy kestrel with the deploy script; the kestrel service restarts itself after the deploy.",
		"The kestrel service logs to journald under the unit name kestrel.",
		"To deploy, tag the release first, then run make deploy from the repository root.",
		"Kestrel service health checks live at /healthz on port 8081.",
		"We deploy on Tuesdays only, never on Fridays.",
		"The kestrel service needs the REDIS_URL variable set before a deploy of kestrel.",
		"Rolling back a kestrel deploy: redeploy the previous tag with the same service script.",
		"The service mesh routes kestrel traffic through envoy.",
		"A failed deploy pages the on-call engineer.",
		"Kestrel was renamed from hawk in March.",
		"The deploy service account has read access to the artefact bucket.",
		"Kestrel deploy notes: how we deploy kestrel to staging before the production service.",
	}
	var lines []string
	for i := 0; i < 36; i++ {
		text := fmt.Sprintf("Note %d about the garden: the tomatoes in bed %d need water every morning.", i, i)
		if i < len(topics) {
			text = topics[i]
		}
		lines = append(lines, fmt.Sprintf(`{"area":"main","text":"ref K%02d. %s"}`, i, text))
	}
	in := filepath.Join(t.TempDir(), "notes.jsonl")
	if err := os.WriteFile(in, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	imp := exec.Command(exe, "memory", "import", in)
	imp.Env = append(os.Environ(), "EXOCORTEX_HOME="+home)
	if out, err := imp.CombinedOutput(); err != nil {
		t.Fatalf("memory import: %v\n%s", err, out)
	}

	srv, err := scripted.NewServer(responses("ANSWER-ONE"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	tm := newTmux(t)
	run, pidFile := envRunner(t, exe, home, work, "OLLAMA_HOST="+srv.URL())
	tm.run("new-session", "-d", "-s", "m", "-x", "250", "-y", "60", "sh "+run+" --model "+srv.Model())
	tm.track(pidFile)
	tm.waitFor("m", "✓ answered", "memory ")
	tm.typeLine("m", query)
	tm.waitFor("m", "ANSWER-ONE")
	req := lastRequest(srv)
	at := strings.Index(req, "Memories recalled for this request")
	if at < 0 {
		t.Fatalf("the model's request has no recall block:\n%s", req)
	}
	recalled := refPattern.FindAllString(req[at:], -1)
	if len(recalled) < 3 {
		t.Fatalf("the recall block lists %d memories, want at least 3:\n%s", len(recalled), req[at:])
	}

	tm.typeLine("m", "/memory search "+query)
	scr := tm.waitAfter("m", "memory search", "ref K")
	listed := refPattern.FindAllString(scr, -1)
	// /memory search lists recall's whole pool (the twelve records about
	// deploying kestrel match), and recall's block (five memories, none of
	// them filtered out here) is its head, in the same order.
	if len(listed) < len(topics) {
		t.Fatalf("/memory search lists %d memories, fewer than the %d that match (recall searches %d): %v\n%s", len(listed), len(topics), protocol.RecallPool, listed, scr)
	}
	if !slices.Equal(listed[:len(recalled)], recalled) {
		t.Fatalf("recall lists %v, /memory search %v:\n%s", recalled, listed, scr)
	}
	t.Logf("recall %v; /memory search %v", recalled, listed)
}
