package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/exocortex/exocortex/memory/service"
)

// memServeCmd holds the home's memory service in the foreground: the owner
// of the store when none runs, else a standby client that takes the store
// over when the owner goes away.
func memServeCmd(f *memoryFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "serve",
		Short: "Serve the memory store on $EXOCORTEX_HOME/run/memory.sock until interrupted",
		Long: `Serve opens the memory store and serves it to every other process on the home
(sessions, memory commands, sleep) on $EXOCORTEX_HOME/run/memory.sock, until it is
interrupted (Ctrl-C, SIGTERM). If another process already serves it, serve stands by
as its client and takes the store over when that process ends or is killed. A
session does not need it: the first process that needs memory serves it.

It prints one line when it is ready: "serving STORE on SOCKET (pid N)" or
"standing by: pid N serves STORE on SOCKET" (with --json, an object with owner,
pid, store and socket).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			c, err := f.connect(ctx, cmd)
			if err != nil {
				return err
			}
			defer c.Close()
			st, err := service.Remote{C: c}.Stats(ctx)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			switch {
			case f.json:
				if err := printJSON(w, map[string]any{"owner": c.Owner(), "pid": st.OwnerPID, "store": st.Dir, "socket": c.Socket()}); err != nil {
					return err
				}
			case c.Owner():
				fmt.Fprintf(w, "serving %s on %s (pid %d)\n", st.Dir, c.Socket(), st.OwnerPID)
			default:
				fmt.Fprintf(w, "standing by: pid %d serves %s on %s\n", st.OwnerPID, st.Dir, c.Socket())
			}
			// A standby client takes the store over by itself
			// (service.Client watches its connection).
			<-ctx.Done()
			return c.Close()
		},
	}
}
