package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"
)

// devReplay replays o.replay through the plugin directory just built into,
// in a process of its own (a fresh host, which loads the new version), and
// copies its report to w.
func devReplay(ctx context.Context, w io.Writer, o devOptions) {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintf(w, "replay: %v\n", err)
		return
	}
	start := time.Now()
	cmd := exec.CommandContext(ctx, exe, "replay", o.replay, "--plugin-dir", o.pluginDir)
	cmd.Stdout, cmd.Stderr = w, w
	err = cmd.Run()
	if ctx.Err() != nil {
		return
	}
	took := time.Since(start).Round(10 * time.Millisecond)
	if err != nil {
		fmt.Fprintf(w, "[%s] replay of %s failed after %s: %v\n", time.Now().Format("15:04:05"), o.replay, took, err)
		return
	}
	fmt.Fprintf(w, "[%s] replayed %s in %s\n", time.Now().Format("15:04:05"), o.replay, took)
}
