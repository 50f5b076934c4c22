package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/exocortex/exocortex/config"
	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/core/watch"
	"github.com/exocortex/exocortex/sdk/python"
)

func newDevCmd() *cobra.Command {
	var o devOptions
	cmd := &cobra.Command{
		Use:   "dev [DIR]",
		Short: "Rebuild a plugin on every change, so a running session reloads it",
		Long: `dev watches a plugin's source in DIR (default: the current directory) and
installs it into the plugin directory on every change; a running Exocortex session
notices the new version and swaps it in at its next iteration, with no restart.

A Go plugin (DIR holds go.mod or .go files) is built with go build into a hidden
temporary file beside its place, then renamed onto it: the plugin directory never
holds a half-written binary. Only .go files (tests left out), go.mod and go.sum
trigger a build. A build that fails leaves the installed plugin as it was and
prints the compiler's messages with their file:line.

A Python plugin (DIR holds plugin.json) is checked for syntax errors, then its
directory is copied into place the same way (a hidden copy, then renames).

With --replay SESSION, every successful build is followed by exocortex replay
SESSION through the plugin directory: what the new version changes in what
the model is shown, printed after the build line (docs/replay.md).

Build failures are also written to $EXOCORTEX_HOME/logs/events.jsonl, where
exocortex plugins status finds them. Stop with Ctrl+C.`,
		Example: `  exocortex dev                       # the plugin in the current directory
  exocortex dev ./my-notes
  exocortex dev --plugin-dir .exocortex/plugins ./my-notes
  exocortex dev --once ./my-notes     # build and install once
  exocortex dev --replay testdata/session.jsonl ./my-notes`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.src = "."
			if len(args) == 1 {
				o.src = args[0]
			}
			if o.pluginDir == "" {
				home, err := config.Home()
				if err != nil {
					return err
				}
				o.pluginDir = filepath.Join(home, "plugins")
			}
			if a, err := loadApp(); err == nil {
				defer a.close()
				o.onEvent = a.eventLogger()
			}
			err := runDev(cmd.Context(), cmd.OutOrStdout(), o)
			var be *watch.BuildError
			if errors.As(err, &be) {
				return &exitError{code: 1, err: errors.New("the build failed")}
			}
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.pluginDir, "plugin-dir", "", "where the plugin is installed (default $EXOCORTEX_HOME/plugins)")
	fl.StringVar(&o.name, "name", "", "the plugin's name in the plugin directory (default: DIR's name)")
	fl.BoolVar(&o.once, "once", false, "build and install once, then exit (status 1 when the build fails)")
	fl.StringArrayVar(&o.flags, "build-flag", nil, "an extra go build flag, e.g. --build-flag=-race (repeatable)")
	fl.StringVar(&o.replay, "replay", "", "after every build, replay SESSION through the new version and print what differs (exocortex replay)")
	return cmd
}

type devOptions struct {
	src, pluginDir, name string
	once                 bool
	flags                []string
	// replay is the session replayed after every successful build.
	replay   string
	debounce time.Duration
	// onEvent records build failures in the event log.
	onEvent func(host.Event)
}

// runDev builds and installs the plugin in o.src, then again on every change
// until ctx ends (or once, with o.once). It returns the first build's error with
// o.once, else nil when ctx ends.
func runDev(ctx context.Context, w io.Writer, o devOptions) error {
	src, err := filepath.Abs(o.src)
	if err != nil {
		return err
	}
	lang, err := pluginLanguage(src)
	if err != nil {
		return err
	}
	name := o.name
	if name == "" {
		name = filepath.Base(src)
	}
	dest := filepath.Join(o.pluginDir, name)
	// Messages name files relative to where dev was started, so an editor or a
	// terminal can jump to them.
	shown := o.src
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, src); err == nil && !strings.HasPrefix(rel, "..") {
			shown = rel
		}
	}
	now := func() string { return time.Now().Format("15:04:05") }
	// Editors' temporary files are never sources (discover.EditorTemp).
	what, match := "Go sources", watch.SourceFile
	if lang == "python" {
		what, match = "files", watch.PluginFile
	}
	// built is the fingerprint of the sources last built, failed or not.
	var built string
	build := func(why string) error {
		if fp, err := watch.Fingerprint(src, match); err == nil {
			built = fp
		}
		start := time.Now()
		var err error
		switch lang {
		case "go":
			err = watch.Build(ctx, watch.BuildOptions{Src: src, Dest: dest, Flags: o.flags})
		default:
			err = watch.InstallPython(ctx, src, dest, python.Interpreter)
		}
		took := time.Since(start).Round(10 * time.Millisecond)
		var be *watch.BuildError
		switch {
		case errors.As(err, &be):
			fmt.Fprintf(w, "[%s] %s: build failed after %s; the installed plugin is unchanged:\n", now(), why, took)
			var lines []string
			for _, d := range be.Diagnostics {
				d.File = filepath.Join(shown, d.File)
				lines = append(lines, d.String())
			}
			if len(lines) == 0 {
				lines = strings.Split(strings.TrimSpace(be.Output), "\n")
			}
			for _, l := range lines {
				fmt.Fprintf(w, "    %s\n", l)
			}
			if o.onEvent != nil {
				o.onEvent(host.Event{Kind: host.EventReloadRejected, Plugin: name,
					Detail: "the new version does not build (exocortex dev): " + strings.Join(lines, "; ")})
			}
		case err != nil:
			fmt.Fprintf(w, "[%s] %s: %v\n", now(), why, err)
		default:
			fmt.Fprintf(w, "[%s] %s: installed %s in %s -> %s; a running session swaps it in at its next iteration\n", now(), why, name, took, dest)
			if o.replay != "" {
				devReplay(ctx, w, o)
			}
		}
		return err
	}

	err = build("first build")
	if o.once {
		return err
	}
	fmt.Fprintf(w, "[%s] watching the %s of %s (Ctrl+C to stop)\n", now(), what, shown)
	return watch.WatchFiles(ctx, src, o.debounce, match, func(changed []string) {
		// A change that leaves the sources as they were last built (a save
		// without an edit, a formatter writing the same text, one save's
		// events split by the debounce) is not built again, so each error
		// is reported once.
		if fp, err := watch.Fingerprint(src, match); err == nil && fp == built {
			return
		}
		why := strings.Join(changed, ", ")
		if len(changed) > 3 {
			why = fmt.Sprintf("%s and %d more", strings.Join(changed[:3], ", "), len(changed)-3)
		}
		_ = build(why + " changed")
	})
}

// pluginLanguage tells a Go plugin's source from a Python plugin's directory.
func pluginLanguage(src string) (string, error) {
	fi, err := os.Stat(src)
	if err != nil {
		return "", fmt.Errorf("plugin source %s: %w", src, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("plugin source %s is not a directory", src)
	}
	if _, err := os.Stat(filepath.Join(src, "go.mod")); err == nil {
		return "go", nil
	}
	if gos, _ := filepath.Glob(filepath.Join(src, "*.go")); len(gos) > 0 {
		return "go", nil
	}
	if _, err := os.Stat(filepath.Join(src, "plugin.json")); err == nil {
		return "python", nil
	}
	return "", fmt.Errorf("%s holds neither a Go plugin (go.mod or .go files) nor a plugin.json; create one with exocortex plugins new", src)
}
