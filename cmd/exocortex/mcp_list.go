package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/exocortex/exocortex/config"
	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/extensions/builtin"
	"github.com/exocortex/exocortex/extensions/mcpclient"
)

func newMCPListCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "Start the configured MCP servers and show their state and tools",
		Long: `list starts every MCP server config.yaml configures (mcp_servers, and the
mcpServers of mcp_servers_file), each within its init_timeout, and shows for each
its transport, command or URL, state (ready or failed), the tools the agent gets
from it (named SERVER.TOOL), and for a server that failed why, its stderr and
what to check. Configuration problems (an unreadable file, an entry with neither
command nor url) come first. The servers are stopped again before it returns.

The agent's sessions start the same servers in the mcp-servers plugin; the state
they found last is in $EXOCORTEX_HOME/` + builtin.MCPStatusFile + `.

Exit status: 0 when every server is ready, 1 otherwise.`,
		Example: `  exocortex mcp list
  exocortex mcp list --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := loadApp()
			if err != nil {
				return err
			}
			defer a.close()
			servers, problems := a.cfg.MCPServersAt(a.home)
			if len(servers) > 0 && !asJSON {
				fmt.Fprintf(cmd.ErrOrStderr(), "starting %d MCP server(s)...\n", len(servers))
			}
			set := mcpclient.Connect(cmd.Context(), servers, mcpclient.Options{Problems: problems, Logger: slog.New(slog.DiscardHandler), Secrets: mcpSecrets(config.Home, os.LookupEnv)})
			defer set.Close()
			rep := mcpclient.Report{Updated: time.Now().UTC(), Servers: set.Statuses(), Problems: problems}
			if asJSON {
				if err := printJSON(cmd.OutOrStdout(), rep); err != nil {
					return err
				}
			} else {
				writeMCPList(cmd.OutOrStdout(), rep)
			}
			if len(rep.Lines()) > 0 {
				return &exitError{code: 1, err: fmt.Errorf("%d MCP server problem(s)", len(rep.Lines()))}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}

func writeMCPList(w io.Writer, rep mcpclient.Report) {
	for _, p := range rep.Problems {
		fmt.Fprintln(w, "problem:", p)
	}
	if len(rep.Servers) == 0 {
		fmt.Fprintln(w, "no MCP servers configured (mcp_servers or mcp_servers_file in config.yaml; see docs/mcp.md)")
		return
	}
	for _, st := range rep.Servers {
		fmt.Fprintf(w, "%s  %s  %s  %s", st.Name, st.State, st.Transport, st.Target)
		if st.Took != "" {
			fmt.Fprintf(w, "  (%s)", st.Took)
		}
		fmt.Fprintln(w)
		if st.State == mcpclient.StateReady {
			fmt.Fprintf(w, "  %d tool(s): %s\n", len(st.Tools), strings.Join(st.Tools, ", "))
			continue
		}
		fmt.Fprintf(w, "  error: %s\n", st.Error)
		if st.Check != "" {
			fmt.Fprintf(w, "  check: %s\n", st.Check)
		}
		if st.Stderr != "" {
			fmt.Fprintf(w, "  stderr:\n    %s\n", strings.ReplaceAll(st.Stderr, "\n", "\n    "))
		}
	}
}

// reportMCP tells the operator about the MCP servers the mcp-servers plugin
// could not start in this run (its status file, written after since).
func reportMCP(w io.Writer, home string, since time.Time, asJSON bool, enc *eventEncoder) {
	for _, line := range mcpclient.Problems(filepath.Join(home, builtin.MCPStatusFile), since) {
		if asJSON {
			enc.event(loop.Event{Type: loop.EventNotice, Plugin: builtin.MCPPlugin, Text: line})
			continue
		}
		fmt.Fprintln(w, "warning:", line)
	}
}
