package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/exocortex/exocortex/core/host"
)

// There is no daemon: `exocortex plugins status` starts the plugins itself, so
// what happened in a running session (reloads, refused versions, failed dev
// builds) comes from the event log the sessions append to.

// pluginHistory is what the event log says about each plugin.
type pluginHistory map[string]*pluginEvents

type pluginEvents struct {
	reloads    int
	lastReload time.Time
	// rejection is the last refused version, when nothing loaded after it.
	rejection *host.Event
	// overBudget counts the time-budget events by extension (host/budget.go).
	overBudget map[string]*host.Overrun
}

// readPluginHistory reads $EXOCORTEX_HOME/logs/events.jsonl. A missing log is
// an empty history; lines that do not decode are skipped.
func readPluginHistory(path string) (pluginHistory, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return pluginHistory{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the event log: %w", err)
	}
	defer f.Close()
	return parsePluginHistory(f), nil
}

func parsePluginHistory(r io.Reader) pluginHistory {
	h := pluginHistory{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for sc.Scan() {
		var e host.Event
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Plugin == "" {
			continue
		}
		pe := h[e.Plugin]
		if pe == nil {
			pe = &pluginEvents{}
			h[e.Plugin] = pe
		}
		switch e.Kind {
		case host.EventReload, host.EventAdded:
			pe.reloads++
			pe.lastReload = e.Time
			pe.rejection = nil
		case "load":
			pe.rejection = nil
		case host.EventReloadRejected:
			ev := e
			pe.rejection = &ev
		case host.EventOverBudget, host.EventBudgetStopped:
			if pe.overBudget == nil {
				pe.overBudget = map[string]*host.Overrun{}
			}
			k := e.Extension + "@" + e.Hook
			o := pe.overBudget[k]
			if o == nil {
				o = &host.Overrun{Extension: e.Extension, Hook: e.Hook}
				pe.overBudget[k] = o
			}
			if e.Kind == host.EventBudgetStopped {
				o.Stopped++
			} else {
				o.Count++
				o.At, o.LastMS, o.BudgetMS = e.Time, e.TookMS, e.BudgetMS
			}
		}
	}
	return h
}

// apply adds the history to a status report: the last refused version and when
// the plugin was last reloaded, where the host itself knows nothing newer.
func (h pluginHistory) apply(st []host.PluginStatus) []host.PluginStatus {
	for i := range st {
		pe := h[st[i].Name]
		if pe == nil {
			continue
		}
		if st[i].LastRejection == "" && pe.rejection != nil {
			st[i].LastRejection = pe.rejection.Time.Local().Format(time.DateTime) + ": " + pe.rejection.Detail
		}
		if st[i].Reloads == 0 {
			st[i].Reloads = pe.reloads
		}
		if len(st[i].OverBudget) == 0 {
			for _, o := range pe.overBudget {
				st[i].OverBudget = append(st[i].OverBudget, *o)
			}
			sort.Slice(st[i].OverBudget, func(a, b int) bool {
				x, y := st[i].OverBudget[a], st[i].OverBudget[b]
				return x.Extension+"@"+x.Hook < y.Extension+"@"+y.Hook
			})
		}
	}
	return st
}

func eventLogPath(a *app) string { return filepath.Join(a.home, "logs", "events.jsonl") }

// printReloadStatus writes the hot-reload lines of one plugin's status.
func printReloadStatus(tw *tabwriter.Writer, p host.PluginStatus) {
	if p.Reloads > 0 {
		fmt.Fprintf(tw, "  reloads:\t%d\n", p.Reloads)
	}
	if p.Pending != "" {
		fmt.Fprintf(tw, "  pending:\t%s\n", p.Pending)
	}
	if p.LastRejection != "" {
		lines := strings.Split(strings.TrimRight(p.LastRejection, "\n"), "\n")
		if len(lines) > 8 {
			lines = append(lines[:8], fmt.Sprintf("(%d more lines)", len(lines)-8))
		}
		fmt.Fprintf(tw, "  last rejection:\t%s\n", lines[0])
		for _, l := range lines[1:] {
			fmt.Fprintf(tw, "  \t%s\n", strings.TrimSpace(l))
		}
	}
}
