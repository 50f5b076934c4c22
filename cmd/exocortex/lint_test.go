package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/core/discover"
	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/lint"
	"github.com/exocortex/exocortex/sdk/sdktest"
	"github.com/exocortex/exocortex/wiring"
)

func copyExecutable(t testing.TB, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o755); err != nil {
		t.Fatal(err)
	}
}

// runExo runs the exocortex binary and returns its stdout, stderr and exit status.
func runExo(t *testing.T, exe, dir, home string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(exe, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "EXOCORTEX_HOME="+home)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return stdout.String(), stderr.String(), 0
	case errors.As(err, &ee):
		return stdout.String(), stderr.String(), ee.ExitCode()
	}
	t.Fatalf("exocortex %v: %v", args, err)
	return "", "", -1
}

func report(t *testing.T, out string) lint.Report {
	t.Helper()
	var r lint.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("--json wrote something that is not a report: %v\n%s", err, out)
	}
	return r
}

func find(r lint.Report, code, plugin, key string) *lint.Finding {
	for i, f := range r.Findings {
		if f.Code == code && (plugin == "" || f.Plugin == plugin) && (key == "" || f.Key == key) {
			return &r.Findings[i]
		}
	}
	return nil
}

// TestLintCommand runs the real binary over real plugin processes: one that
// fails at start-up, one whose flag is never reset, a seed-style hook directory,
// and the built-ins; --write, the WIRING.md check, --json and the exit statuses.
func TestLintCommand(t *testing.T) {
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	plug := sdktest.BuildPlugin(t, "./testdata/lintplugin")
	home, wd := t.TempDir(), t.TempDir()
	plugins := filepath.Join(wd, "plugins")
	copyExecutable(t, plug, filepath.Join(plugins, "p01"))
	copyExecutable(t, plug, filepath.Join(plugins, "gate02"))
	if err := os.WriteFile(filepath.Join(plugins, "broken"), []byte("#!/bin/sh\necho \"ModuleNotFoundError: No module named 'python.helpers'\" >&2\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	copyExecutable(t, plug, filepath.Join(plugins, "message_loop_end", "_50_supervisor_loop"))

	out, stderr, code := runExo(t, exe, wd, home, "lint", "--json", "--dir", "plugins")
	if code != 1 {
		t.Fatalf("exit status %d, want 1 (errors found); stderr:\n%s", code, stderr)
	}
	r := report(t, out)
	if f := find(r, "EXO101", "broken", ""); f == nil || !strings.Contains(f.Message, "python.helpers") {
		t.Errorf("the plugin that fails to start is not reported with its stderr: %+v", f)
	}
	if find(r, "EXO051", "gate02", "lint_test_gate") == nil {
		t.Errorf("the flag set and never reset is not reported")
	}
	if f := find(r, "EXO081", "", ""); f == nil || f.File != filepath.Join(plugins, "message_loop_end") {
		t.Errorf("the hook-named directory is not reported: %+v", f)
	}
	if find(r, "EXO121", "", "") != nil {
		t.Errorf("without a WIRING.md in the working directory there is nothing to compare")
	}
	if r.Errors == 0 || len(r.Findings) < 3 {
		t.Errorf("report counts: %+v", r)
	}

	// --write, then the check passes, then an edit is caught.
	doc := filepath.Join(wd, "docs", "WIRING.md")
	os.MkdirAll(filepath.Dir(doc), 0o755)
	if _, stderr, _ := runExo(t, exe, wd, home, "lint", "--dir", "plugins", "--write", "--wiring", doc); !strings.Contains(stderr, "wrote "+doc) {
		t.Fatalf("--write did not say it wrote %s: %s", doc, stderr)
	}
	written, err := os.ReadFile(doc)
	if err != nil || !bytes.HasPrefix(written, []byte(wiring.Header)) || !bytes.Contains(written, []byte("`p01_ext`")) {
		t.Fatalf("WIRING.md was not generated: %v\n%s", err, written)
	}
	out, _, _ = runExo(t, exe, wd, home, "lint", "--json", "--dir", "plugins", "--wiring", doc)
	if f := find(report(t, out), "EXO121", "", ""); f != nil {
		t.Errorf("a freshly written WIRING.md is reported stale: %s", f.Message)
	}
	os.WriteFile(doc, bytes.Replace(written, []byte("p01_ext"), []byte("p01_renamed"), 1), 0o644)
	out, _, _ = runExo(t, exe, wd, home, "lint", "--json", "--dir", "plugins", "--wiring", doc)
	if find(report(t, out), "EXO121", "", "") == nil {
		t.Errorf("an edited WIRING.md is not reported")
	}

	// Text output and usage errors.
	out, _, _ = runExo(t, exe, wd, home, "lint", "--dir", "plugins")
	if !strings.Contains(out, "error EXO101 plugin=broken") || !strings.Contains(out, "    fix: ") {
		t.Errorf("text output:\n%s", out)
	}
	for _, args := range [][]string{{"lint", "--no-such-flag"}, {"lint", "extra"}, {"lint", "--builtins-only", "--dir", "x"}} {
		if _, stderr, code := runExo(t, exe, wd, home, args...); code != 2 {
			t.Errorf("exocortex %v: exit status %d, want 2 (usage); stderr: %s", args, code, stderr)
		}
	}
}

// TestCommittedWiringIsGenerated: the repository's WIRING.md is what
// `exocortex lint --builtins-only --write` writes.
func TestCommittedWiringIsGenerated(t *testing.T) {
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	out, stderr, code := runExo(t, exe, repo, t.TempDir(), "lint", "--builtins-only", "--json", "--wiring", filepath.Join(repo, "WIRING.md"))
	if code == 2 {
		t.Fatalf("usage error: %s", stderr)
	}
	if f := find(report(t, out), "EXO121", "", ""); f != nil {
		t.Errorf("%s\nrun: go run ./cmd/exocortex lint --builtins-only --write", f.Message)
	}
}

// BenchmarkLint20Processes lints 20 real plugin processes: discovery, start-up,
// handshake and manifest of each (through the host), the tree scan, and Check.
func BenchmarkLint20Processes(b *testing.B) {
	plug := sdktest.BuildPlugin(b, "./testdata/lintplugin")
	dir := b.TempDir()
	for i := range 20 {
		copyExecutable(b, plug, filepath.Join(dir, fmt.Sprintf("p%02d", i+1)))
	}
	opts := host.Options{
		Dirs:   []discover.Dir{{Path: dir, Source: discover.User}},
		Logger: slog.New(slog.DiscardHandler),
	}
	b.ResetTimer()
	for b.Loop() {
		in, err := lintInput(context.Background(), opts, nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		if len(in.Plugins) != 20 {
			b.Fatalf("loaded %d plugins, want 20", len(in.Plugins))
		}
		// Without the built-ins, the response tool's prompt is an orphan
		// (EXO112); every plugin must have loaded.
		for _, f := range lint.Check(in) {
			if f.Code == "EXO101" {
				b.Fatalf("%s", f.Message)
			}
		}
	}
}
