package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/spf13/cobra"

	"github.com/exocortex/exocortex/config"
	"github.com/exocortex/exocortex/core/session"
	"github.com/exocortex/exocortex/prompts"
	"github.com/exocortex/exocortex/replay"
)

// replayFlags are `exocortex replay`'s flags (dev --replay passes them on).
type replayFlags struct {
	check, asJSON, rerunTools bool
	allowWiringErrors         bool
	pluginDirs                []string
}

func newReplayCmd() *cobra.Command {
	var f replayFlags
	cmd := &cobra.Command{
		Use:   "replay SESSION",
		Short: "Replay a recorded session through today's plugins and show what the model would have seen differently",
		Long: `Replay a recorded session: its user messages and its recorded model replies go
through today's plugins (real plugin processes, the host the terminal opens),
with a scripted model serving the recorded replies, so no model is called.
Tools are not run again: the recorded result of the same call is used
(--rerun-tools runs them, held calls approved only for read-only tools).

SESSION is a session name (sessions are recorded as they are held, beside
their file), a session file, its .replay directory, or a file written by
run --json.

The report goes turn by turn and iteration by iteration: prompt blocks added,
removed or changed (with the extension and hook that made them), the system
prompt and history sent, state keys written, signals, tool calls, extension
errors, and the time per extension. When the loop takes another path (a tool
call refused or changed, the monologue ending earlier), the replay says at
which turn and iteration the paths parted and stops that turn there.

The replay runs in a scratch home (memory, state and staging start empty and
are removed after), so it changes nothing of yours and two replays agree.
--check exits 1 on any difference (for a plugin's CI); --json writes the
report as one JSON object.`,
		Example: `  exocortex replay 2026-11-21-1530-ab12
  exocortex replay testdata/session.jsonl --plugin-dir ./build --check
  exocortex run -p "hi" --json > run.jsonl && exocortex replay run.jsonl --json
  exocortex plugins port ~/agent-zero/usr --out ported/a0 && exocortex replay NAME --plugin-dir ported --allow-wiring-errors`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rep, err := runReplay(cmd, args[0], f)
			if err != nil {
				return err
			}
			if f.asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				if err := enc.Encode(rep); err != nil {
					return err
				}
			} else {
				rep.WriteText(cmd.OutOrStdout())
			}
			if f.check && !rep.Clean() {
				return &exitError{1, fmt.Errorf("replay of %s: the plugins change what the model is shown (%d iterations differ, %d divergences)", args[0], len(rep.Differences), len(rep.Divergences))}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&f.check, "check", false, "exit 1 when anything differs")
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "write the report as JSON")
	cmd.Flags().BoolVar(&f.rerunTools, "rerun-tools", false, "run the tools again instead of using their recorded results")
	cmd.Flags().BoolVar(&f.allowWiringErrors, "allow-wiring-errors", false, "start plugins the wiring lint finds errors in (a ported Agent Zero tree often has some)")
	cmd.Flags().StringArrayVar(&f.pluginDirs, "plugin-dir", nil, "also load the plugins under DIR (repeatable): the plugin being changed")
	return cmd
}

// runReplay loads the recording and replays it.
func runReplay(cmd *cobra.Command, arg string, f replayFlags) (*replay.Report, error) {
	a, err := loadApp()
	if err != nil {
		return nil, err
	}
	defer a.close()
	path, err := recordingPath(a.home, arg)
	if err != nil {
		return nil, &exitError{2, err}
	}
	rec, err := replay.Load(path)
	if err != nil {
		return nil, &exitError{2, err}
	}
	for _, w := range rec.Warnings {
		fmt.Fprintln(cmd.ErrOrStderr(), "warning:", w)
	}
	for _, d := range f.pluginDirs {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			return nil, &exitError{2, fmt.Errorf("--plugin-dir %s: not a directory (give the directory that holds the plugin, or its parent)", d)}
		}
		abs, _ := filepath.Abs(d)
		if !slices.Contains(a.cfg.PluginDirs, abs) && abs != filepath.Join(a.home, "plugins") {
			a.cfg.PluginDirs = append(a.cfg.PluginDirs, abs)
		}
	}
	a.allowWiringErrors = f.allowWiringErrors
	if f.rerunTools {
		// The tools run again: inside the sandbox, whatever the configuration says.
		a.cfg.Tools.Sandbox.UnsafeDisable = false
	}
	loader := prompts.NewLoader(a.promptDirs(cwd())...)
	scratch, err := a.scratchHome()
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(scratch)
	ctx := cmd.Context()
	h, err := a.openHost(ctx, true)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	reportLoad(cmd.ErrOrStderr(), h, false, nil)
	opts := a.agentOptions(h, nil, loader, "")
	errw := cmd.ErrOrStderr()
	return replay.Run(ctx, rec, replay.Options{
		Host: h, Agent: opts, Provider: a.cfg.Provider, RerunTools: f.rerunTools,
		Progress: func(turn, turns int) {
			if turns >= 10 && !f.asJSON && (turn%10 == 0 || turn == turns) {
				fmt.Fprintf(errw, "replaying turn %d of %d\n", turn, turns)
			}
		},
	})
}

// recordingPath finds what SESSION names: a file or directory, else a
// session of the home.
func recordingPath(home, arg string) (string, error) {
	if _, err := os.Stat(arg); err == nil {
		return arg, nil
	}
	if err := session.ValidateName(arg); err != nil {
		return "", fmt.Errorf("replay %s: no such file, and %w", arg, err)
	}
	path := filepath.Join(home, "sessions", arg+".jsonl")
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("replay %s: no such file, and no session by that name under %s (give a session's name, a session file or a run --json file)", arg, filepath.Dir(path))
	}
	return path, nil
}

// scratchHome moves the app's home to a new temporary directory holding
// the configuration, after the plugin and prompt directories of the real
// home were taken: the plugins see an empty memory, state and staging.
func (a *app) scratchHome() (string, error) {
	dir, err := os.MkdirTemp("", "exocortex-replay-")
	if err != nil {
		return "", fmt.Errorf("replay: creating a scratch home: %w", err)
	}
	if fi, err := os.Stat(filepath.Join(a.home, "plugins")); err == nil && fi.IsDir() {
		a.cfg.PluginDirs = append([]string{filepath.Join(a.home, "plugins")}, a.cfg.PluginDirs...)
	}
	if b, err := os.ReadFile(filepath.Join(a.home, config.FileName)); err == nil {
		if err := os.WriteFile(filepath.Join(dir, config.FileName), b, 0o600); err != nil {
			os.RemoveAll(dir)
			return "", fmt.Errorf("replay: %w", err)
		}
	}
	a.home = dir
	// The plugins find the home by it too (and take the operator's from the
	// environment the command inherited otherwise).
	if err := os.Setenv(config.HomeEnv, dir); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("replay: %w", err)
	}
	return dir, nil
}
