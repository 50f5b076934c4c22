package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/exocortex/exocortex/core/hooks"
	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/extensions/builtin"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/scaffold"
	"github.com/exocortex/exocortex/sdk"
)

// defaultOrder is where a new extension goes unless that order is taken by a
// built-in extension at its hook: well after the built-ins, which use small
// numbers.
const defaultOrder = 500

func newPluginsNewCmd() *cobra.Command {
	var (
		o      scaffold.Options
		dir    string
		src    string
		asJSON bool
		// noSession skips recording testdata/session.jsonl.
		noSession bool
	)
	cmd := &cobra.Command{
		Use:   "new NAME",
		Short: "Write a new plugin: an extension at a hook, a test, a Makefile and a README",
		Long: `new writes a working plugin into ./NAME (or --dir): an extension that runs at
--hook, keeps a count of its calls in a state key of its own (and at a
prompt-assembly hook adds a prompt block), a test that calls it through the real
protocol, a Makefile (make build installs it into $EXOCORTEX_HOME/plugins without
ever exposing a half-written file, make test, make dev) and a README.

A Go plugin (--lang go) is its own module. Run from an Exocortex checkout (or with
--exocortex-src), its go.mod builds against that checkout and the checkout's
dependency versions, offline. A Python plugin (--lang python) gets a plugin.json
that starts it with /usr/bin/python3 and a copy of the Python SDK beside main.py.

The extension's order at its hook is --order, or the first of 500, 510, ... that
no extension uses there: neither a built-in one nor one of the installed plugins
(those of the plugin directories a session here would load). The Makefile's
make dev runs the exocortex binary that wrote it (EXOCORTEX=... overrides it). Hooks: ` + strings.Join(scaffold.HookNames(), ", ") + `.`,
		Example: `  exocortex plugins new my-notes
  exocortex plugins new guard --hook tool_execute_before
  exocortex plugins new recall --lang python --hook message_loop_prompts_after
  cd my-notes && make test && make build      # or: exocortex dev my-notes`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			if dir == "" {
				dir = o.Name
			}
			if _, ok := hooks.Lookup(o.Hook); !ok {
				return fmt.Errorf("--hook %q is not a hook; choose one of: %s", o.Hook, strings.Join(scaffold.HookNames(), ", "))
			}
			if o.Order == 0 {
				order, err := freeOrder(cmd.Context(), o.Hook)
				if err != nil {
					return err
				}
				o.Order = order
			}
			if o.Lang == scaffold.Go {
				if src == "" {
					src = findCheckout()
				}
				if src != "" {
					o.SDKDir = src
				} else if o.SDKVersion == "" {
					o.SDKVersion = builtVersion()
					if o.SDKVersion == "" {
						return errors.New("this exocortex was not built from a released version and no checkout was found; pass --exocortex-src DIR (a checkout) or --sdk-version vX.Y.Z")
					}
				}
			}
			// The Makefile's dev target runs this very binary (EXOCORTEX ?=),
			// so it works where exocortex is not on PATH.
			if exe, err := os.Executable(); err == nil {
				o.Exocortex = exe
			}
			files, err := scaffold.Generate(dir, o)
			if err != nil {
				return err
			}
			if !noSession {
				// The plugin is written whatever happens here: a session
				// that could not be recorded costs make replay only.
				switch err := recordScaffoldSession(cmd.Context(), dir); {
				case errors.Is(err, errNotExocortex):
					// A test binary: nothing to record with.
				case err != nil:
					fmt.Fprintln(cmd.ErrOrStderr(), "warning:", err, "(make replay needs testdata/session.jsonl: record one with exocortex run --json)")
				default:
					files = append(files, scaffoldSession)
				}
			}
			return reportNew(cmd.OutOrStdout(), dir, o, files, asJSON)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Lang, "lang", scaffold.Go, "the plugin's language: go or python")
	fl.StringVar(&o.Hook, "hook", "message_loop_prompts_after", "the hook the extension handles")
	fl.IntVar(&o.Order, "order", 0, "the extension's order at its hook (0: the first of 500, 510, ... no built-in uses there)")
	fl.StringVar(&dir, "dir", "", "where to write the plugin (default ./NAME)")
	fl.StringVar(&o.Module, "module", "", "the Go module path (default exocortex.local/plugins/NAME)")
	fl.StringVar(&src, "exocortex-src", "", "an Exocortex checkout to build a Go plugin against (default: found above the current directory or the exocortex binary)")
	fl.StringVar(&o.SDKVersion, "sdk-version", "", "the SDK version a Go plugin requires when there is no checkout")
	fl.BoolVar(&asJSON, "json", false, "write what was created as JSON")
	fl.BoolVar(&noSession, "no-session", false, "do not record testdata/session.jsonl (the session make replay replays)")
	return cmd
}

func reportNew(w io.Writer, dir string, o scaffold.Options, files []string, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Dir   string   `json:"dir"`
			Name  string   `json:"name"`
			Lang  string   `json:"lang"`
			Hook  string   `json:"hook"`
			Order int      `json:"order"`
			Files []string `json:"files"`
		}{dir, o.Name, o.Lang, o.Hook, o.Order, files})
	}
	fmt.Fprintf(w, "created %s plugin %s in %s (extension %s at %s, order %d):\n", o.Lang, o.Name, dir,
		strings.ReplaceAll(o.Name, "-", "_"), o.Hook, o.Order)
	for _, f := range files {
		fmt.Fprintf(w, "  %s\n", f)
	}
	fmt.Fprintf(w, "\nnext:\n  cd %s\n  make test     # its test, through the real protocol\n  make build    # install it; a running session loads it at its next iteration\n  make dev      # or: rebuild and reload on every change\n", dir)
	if o.Lang == scaffold.Go && o.SDKDir == "" {
		fmt.Fprintf(w, "  go mod tidy   # first: fetch the SDK %s\n", o.SDKVersion)
	}
	return nil
}

// freeOrder is the first of 500, 510, ... that no extension uses at hook:
// neither a built-in one nor one of the plugins installed in the plugin
// directories a session would load (started to read their manifests), so a
// second scaffolded plugin does not collide with the first.
func freeOrder(ctx context.Context, hook string) (int, error) {
	used, err := builtinOrders(ctx, hook)
	if err != nil {
		return 0, err
	}
	installed, err := installedOrders(ctx, hook)
	if err != nil {
		return 0, err
	}
	for o := range installed {
		used[o] = true
	}
	order := defaultOrder
	for used[int32(order)] {
		order += 10
	}
	return order, nil
}

// builtinOrders are the orders the built-in extensions use at hook.
func builtinOrders(ctx context.Context, hook string) (map[int32]bool, error) {
	used := map[int32]bool{}
	quiet := slog.New(slog.DiscardHandler)
	for name, p := range builtin.Plugins() {
		p.Logger = quiet
		srv, err := sdk.NewServer(p)
		if err != nil {
			return nil, fmt.Errorf("built-in plugin %s: %w", name, err)
		}
		m, err := srv.Manifest(ctx, &exocortexv1.ManifestRequest{ProtocolVersion: sdk.ProtocolVersion})
		if err != nil {
			return nil, fmt.Errorf("built-in plugin %s: %w", name, err)
		}
		for _, e := range m.GetExtensions() {
			if hooks.Name(e.GetHook()) == hook {
				used[e.GetOrder()] = true
			}
		}
	}
	return used, nil
}

// installedOrders are the orders the installed plugins' extensions use at
// hook: the plugin directories' plugins, started without the built-ins.
func installedOrders(ctx context.Context, hook string) (map[int32]bool, error) {
	a, err := loadApp()
	if err != nil {
		return nil, fmt.Errorf("finding the orders the installed plugins use: %w", err)
	}
	defer a.close()
	opts, err := a.hostOptions()
	if err != nil {
		return nil, err
	}
	opts.Builtins = nil
	h, err := host.New(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("finding the orders the installed plugins use: %w", err)
	}
	defer h.Close()
	used := map[int32]bool{}
	for _, p := range h.Status() {
		for _, e := range p.Extensions {
			if e.Hook == hook {
				used[e.Order] = true
			}
		}
	}
	return used, nil
}

// findCheckout looks for an Exocortex checkout above the working directory, then
// above the exocortex binary (a binary built into a checkout's bin/).
func findCheckout() string {
	if wd, err := os.Getwd(); err == nil {
		if c := scaffold.FindCheckout(wd); c != "" {
			return c
		}
	}
	if exe, err := os.Executable(); err == nil {
		if r, err := filepath.EvalSymlinks(exe); err == nil {
			exe = r
		}
		return scaffold.FindCheckout(filepath.Dir(exe))
	}
	return ""
}

// builtVersion is the module version this binary was built from, when it is a
// release ("" for a development build).
func builtVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok || bi.Main.Path != scaffold.SDKModule || !strings.HasPrefix(bi.Main.Version, "v") {
		return ""
	}
	return bi.Main.Version
}
