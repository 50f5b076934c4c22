package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/replay"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// recordSession records an operator session (line mode, the built-in suite,
// a fresh home) of the given user messages and scripted replies.
func recordSession(t *testing.T, exe, name string, replies []map[string]any, messages []string) (home string) {
	t.Helper()
	home = t.TempDir()
	script := writeScript(t, 16, 0, replies...)
	cmd := exec.Command(exe, "--model", "script:"+script, "--session", name)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "EXOCORTEX_HOME="+home)
	cmd.Stdin = strings.NewReader(strings.Join(messages, "\n") + "\n")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if out, err := cmd.Output(); err != nil {
		t.Fatalf("recording the session: %v\nstderr:\n%s\nstdout:\n%s", err, stderr.String(), out)
	}
	return home
}

// treeDigest is a digest of every file under dir (names, contents).
func treeDigest(t *testing.T, dir string) string {
	t.Helper()
	var names []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			names = append(names, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, p := range names {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(h, "%s %d\n", p, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// recordedBlock returns the content of the block titled title in the request
// of the given turn and iteration of the recording, "" when there is none.
func recordedBlock(t *testing.T, home, session string, turn, iteration int, title string) string {
	t.Helper()
	rec, err := replay.Load(filepath.Join(home, "sessions", session+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tu := range rec.Turns {
		if tu.N != turn {
			continue
		}
		for _, it := range tu.Iterations {
			if it.N != iteration || it.Request == nil {
				continue
			}
			for _, b := range it.Request.Blocks {
				if b.Title == title {
					return b.Content
				}
			}
		}
	}
	return ""
}

// TestReplayMemorySaveWritesTheReplaysMemory: a memory_save of turn 1 is
// recalled in turn 2 (the recording's MEMORY RECALL block holds the value,
// which only the save wrote; its line break keeps the call's JSON in the
// history from counting as the memory's text already in the conversation,
// which recall leaves out). Replayed, the save runs again into the
// replay's scratch memory, so turn 2 recalls it as the recording did and the
// replay is clean; the operator's memory is not touched.
func TestReplayMemorySaveWritesTheReplaysMemory(t *testing.T) {
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	replies := []map[string]any{
		{"thoughts": []string{"keep it"}, "tool_name": "memory_save", "tool_args": map[string]any{"key": "shed_code", "value": "Shed door code:\n4417, on the brass keypad.", "tags": []string{"home"}}},
		{"thoughts": []string{"saved"}, "tool_name": "response", "tool_args": map[string]any{"text": "Kept."}},
		{"thoughts": []string{"recall"}, "tool_name": "response", "tool_args": map[string]any{"text": "It is in your memory."}},
	}
	home := recordSession(t, exe, "save", replies, []string{"keep the shed code safe for me", "what is the shed door code on the keypad?"})
	if b := recordedBlock(t, home, "save", 2, 1, "MEMORY RECALL"); !strings.Contains(b, "4417") {
		t.Fatalf("the recording's turn 2 does not recall the saved value; its MEMORY RECALL block:\n%s", b)
	}
	before := treeDigest(t, filepath.Join(home, "memory"))
	for run := 1; run <= 2; run++ {
		out, stderr, code := replayCmd(t, exe, home, "save", "--check", "--json")
		rep := decodeReport(t, out, stderr)
		if code != 0 || !rep.Clean() {
			t.Fatalf("replay %d: exit %d, %d iterations differ, divergences %+v\nstdout:\n%s\nstderr:\n%s", run, code, len(rep.Differences), rep.Divergences, out, stderr)
		}
		if after := treeDigest(t, filepath.Join(home, "memory")); after != before {
			t.Fatalf("replay %d changed the operator's memory under %s", run, filepath.Join(home, "memory"))
		}
	}
}

// TestReplayLongSessionIsClean records a 24-turn session with the built-in
// suite (memorize, recall, ontology and the rest): memory_save every fourth
// turn, memory_load two turns later, plain answers between, every turn
// recalling from a memory that grows. Replayed with no change, three times
// in a row with no model reachable, it shows no difference and exits 0: the
// memory's BM25 scores do not depend on the full-text index's segments, and
// the saves are written into the replay's memory.
func TestReplayLongSessionIsClean(t *testing.T) {
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	topics := []string{"the garden shed", "the quarterly invoice", "the kernel upgrade", "the orchid greenhouse", "the pasta recipe", "the router firmware"}
	const turns = 24
	var replies []map[string]any
	var messages []string
	saves := 0
	for i := 1; i <= turns; i++ {
		topic := topics[(i-1)/4%len(topics)]
		switch i % 4 {
		case 1:
			saves++
			messages = append(messages, fmt.Sprintf("question %d: remember a detail about %s", i, topic))
			replies = append(replies,
				map[string]any{"thoughts": []string{"save it"}, "tool_name": "memory_save", "tool_args": map[string]any{"key": fmt.Sprintf("detail_%d", i), "value": fmt.Sprintf("Detail %d about %s:\nfiled in drawer D%d.", i, topic, i*7), "tags": []string{"detail"}}},
				map[string]any{"thoughts": []string{"saved"}, "tool_name": "response", "tool_args": map[string]any{"text": fmt.Sprintf("Answer %d: noted.", i)}})
		case 3:
			messages = append(messages, fmt.Sprintf("question %d: what did I tell you about %s?", i, topic))
			replies = append(replies,
				map[string]any{"thoughts": []string{"look it up"}, "tool_name": "memory_load", "tool_args": map[string]any{"query": topic + " drawer", "threshold": 0.1}},
				map[string]any{"thoughts": []string{"found"}, "tool_name": "response", "tool_args": map[string]any{"text": fmt.Sprintf("Answer %d: it is filed, as you said about %s.", i, topic)}})
		default:
			messages = append(messages, fmt.Sprintf("question %d: say something about %s", i, topic))
			replies = append(replies,
				map[string]any{"thoughts": []string{"answer"}, "tool_name": "response", "tool_args": map[string]any{"text": fmt.Sprintf("Answer %d: %s is in hand.", i, topic)}})
		}
	}
	home := recordSession(t, exe, "long", replies, messages)
	// The session is what it should be: the saves were recalled later.
	if b := recordedBlock(t, home, "long", 22, 1, "MEMORY RECALL"); !strings.Contains(b, "drawer D") {
		t.Fatalf("turn 22 of the recording recalls no saved detail; its MEMORY RECALL block:\n%s", b)
	}
	for run := 1; run <= 3; run++ {
		out, stderr, code := replayCmd(t, exe, home, "long", "--check", "--json")
		rep := decodeReport(t, out, stderr)
		if rep.Turns != turns {
			t.Fatalf("replay %d: %d turns, want %d", run, rep.Turns, turns)
		}
		if code != 0 || !rep.Clean() {
			var b strings.Builder
			for _, id := range rep.Differences {
				for _, d := range id.Differences {
					fmt.Fprintf(&b, "turn %d iteration %d: %s %s %q\n  recorded: %.300s\n  replayed: %.300s\n", id.Turn, id.Iteration, d.Kind, d.Extension, d.What, d.Recorded, d.Replayed)
				}
			}
			t.Fatalf("replay %d of %d saves over %d turns: exit %d, divergences %+v\n%s", run, saves, turns, code, rep.Divergences, b.String())
		}
	}
}
