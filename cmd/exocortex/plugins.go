package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/extensions/cmdhooks"
)

func newPluginsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plugins",
		Short: "List plugins and their health",
	}
	var asJSON bool
	show := func(detail bool) func(*cobra.Command, []string) error {
		return func(cmd *cobra.Command, names []string) error {
			a, err := loadApp()
			if err != nil {
				return err
			}
			defer a.close()
			// Read before this host logs its own loads (plugins_history.go).
			hist, err := readPluginHistory(eventLogPath(a))
			if err != nil {
				return err
			}
			started := time.Now().UTC()
			h, err := a.openHost(cmd.Context(), false)
			if err != nil {
				return err
			}
			defer h.Close()
			st, err := onlyNamed(hist.apply(h.Status()), names)
			if err != nil {
				return err
			}
			// What the loader kept out or skipped: wiring errors, an
			// untrusted project, a configured directory that does not exist,
			// a plugin file without its execute bit.
			for _, n := range h.Notices() {
				fmt.Fprintln(cmd.ErrOrStderr(), "warning:", n)
			}
			// The MCP servers the mcp-servers plugin could not start.
			reportMCP(cmd.ErrOrStderr(), a.home, started, false, nil)
			// The command hooks that cannot run or be read (the lint's
			// EXO141 and EXO142): the plugin serves the others.
			if len(names) == 0 || slices.Contains(names, cmdhooks.PluginName) {
				for _, p := range hookProblems(a.cfg.CommandHooksSettings(a.home, cwd()), cwd()) {
					fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s (%s)\n", p.Message, p.Fix)
				}
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(st)
			}
			printStatus(cmd.OutOrStdout(), st, detail)
			return nil
		}
	}
	list := &cobra.Command{
		Use:   "list [NAME...]",
		Short: "Every plugin (or the NAMEd ones) and its extensions: where it was loaded from, hook, order, what it shadows",
		RunE:  show(false),
	}
	status := &cobra.Command{
		Use:   "status [NAME...]",
		Short: "Every plugin's (or the NAMEd ones') health: state, crashes, restarts, reloads, last error, last refused version and stderr",
		Example: `  exocortex plugins status
  exocortex plugins status memory-tools --json`,
		RunE: show(true),
	}
	for _, c := range []*cobra.Command{list, status} {
		c.Flags().BoolVar(&asJSON, "json", false, "write JSON")
	}
	cmd.AddCommand(list, status, newPluginsNewCmd(), newPluginsPortCmd())
	return cmd
}

// onlyNamed keeps the plugins names lists (all of them when it is empty),
// in st's order; a name no plugin has is an error naming the plugins there are.
func onlyNamed(st []host.PluginStatus, names []string) ([]host.PluginStatus, error) {
	if len(names) == 0 {
		return st, nil
	}
	var out []host.PluginStatus
	all := make([]string, 0, len(st))
	for _, p := range st {
		all = append(all, p.Name)
		if slices.Contains(names, p.Name) {
			out = append(out, p)
		}
	}
	for _, n := range names {
		if !slices.Contains(all, n) {
			return nil, &exitError{1, fmt.Errorf("no plugin called %q; the plugins are: %s", n, strings.Join(all, ", "))}
		}
	}
	return out, nil
}

func printStatus(w io.Writer, st []host.PluginStatus, detail bool) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, p := range st {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", p.Name, p.State, p.Source, p.Path)
		for _, e := range p.Extensions {
			state := ""
			if e.Disabled {
				state = "disabled or shadowed"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%d\t%s\n", e.Name, e.Hook, e.Order, state)
		}
		if len(p.Tools) > 0 {
			fmt.Fprintf(tw, "  tools:\t%s\n", strings.Join(p.Tools, ", "))
		}
		for _, s := range p.Shadows {
			fmt.Fprintf(tw, "  shadow:\t%s %q of %s is hidden by %s\n", s.Kind, s.Name, s.Hidden, s.By)
		}
		if detail {
			fmt.Fprintf(tw, "  crashes:\t%d\trestarts: %d\n", p.Crashes, p.Restarts)
			if p.StartMS > 0 || p.State == host.StateRunning {
				fmt.Fprintf(tw, "  start:\t%s%s\n", time.Duration(p.StartMS)*time.Millisecond, slowNote(p.StartMS))
			}
			switch p.Calls {
			case "dispatch":
				fmt.Fprintf(tw, "  calls:\tbatches over one Dispatch stream\n")
			case "batch":
				fmt.Fprintf(tw, "  calls:\tbatches (RunBatch), a call each\n")
			case "unary":
				fmt.Fprintf(tw, "  calls:\tone call per extension (the plugin serves neither RunBatch nor Dispatch: slower)\n")
			}
			if p.LastError != "" {
				fmt.Fprintf(tw, "  last error:\t%s\n", firstLine(p.LastError))
			}
			printReloadStatus(tw, p)
			for _, o := range p.OverBudget {
				stopped := ""
				if o.Stopped > 0 {
					stopped = fmt.Sprintf(", stopped for the rest of %d monologue(s)", o.Stopped)
				}
				fmt.Fprintf(tw, "  over budget:	%s at %s: %d time(s), last %dms against %dms%s\n", o.Extension, o.Hook, o.Count, o.LastMS, o.BudgetMS, stopped)
			}
			if p.Stderr != "" {
				for _, l := range strings.Split(strings.TrimRight(p.Stderr, "\n"), "\n") {
					fmt.Fprintf(tw, "  stderr:\t%s\n", l)
				}
			}
		}
	}
	tw.Flush()
}

// slowNote marks a start-up time over host.DefaultSlowStart.
func slowNote(ms int64) string {
	if time.Duration(ms)*time.Millisecond > host.DefaultSlowStart {
		return fmt.Sprintf(" (slow: more than %s, and every run waits for it)", host.DefaultSlowStart)
	}
	return ""
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
