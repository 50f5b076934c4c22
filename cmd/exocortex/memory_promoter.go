package main

import (
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/exocortex/exocortex/config"
	"github.com/exocortex/exocortex/memory/natsjournal"
)

func memPromoterCmd(f *memoryFlags) *cobra.Command {
	var journal, dir, id string
	var lease time.Duration
	cmd := &cobra.Command{
		Use:   "promoter",
		Short: "Run a promoter for the shared journal (hosts write with ?promoter=true): one is active, others stand by",
		Long: `promoter decides the proposals hosts publish on the EVENTS stream of a shared
journal whose URL has ?promoter=true: it canonicalises them, drops duplicates,
puts a write on the record that holds its key in the area, records each
decision (promote, override, skip, defer) on the AUDIT stream and writes the
deltas to the journal stream. Run one per machine you like: one holds the
lease and works, the others stand by and take over within --lease of its
death. Its replica of the journal lives in --replica. It runs until interrupted.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if journal == "" {
				journal = os.Getenv("EXOCORTEX_NATS_URL")
			}
			if journal == "" {
				if _, cfg, err := f.loadConfig(); err == nil {
					journal = cfg.Memory.Journal
				}
			}
			if journal == "" {
				return fmt.Errorf("memory promoter: no shared journal: give --journal nats://… or set memory.journal")
			}
			cfg, err := natsjournal.ParseURL(journal)
			if err != nil {
				return err
			}
			if dir == "" {
				home, err := config.Home()
				if err != nil {
					return err
				}
				dir = filepath.Join(home, "memory-promoter")
			}
			log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelInfo}))
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			fmt.Fprintf(cmd.ErrOrStderr(), "memory promoter: %s, replica in %s\n", cfg.Servers, dir)
			return natsjournal.RunPromoter(ctx, natsjournal.PromoterConfig{Journal: cfg, Dir: dir, ID: id, Lease: lease, Logger: log})
		},
	}
	cmd.Flags().StringVar(&journal, "journal", "", "the shared journal's URL (default memory.journal or EXOCORTEX_NATS_URL)")
	cmd.Flags().StringVar(&dir, "replica", "", "the promoter's replica of the journal (default $EXOCORTEX_HOME/memory-promoter)")
	cmd.Flags().StringVar(&id, "id", "", "this promoter's name in the lease and the audit (default: generated)")
	cmd.Flags().DurationVar(&lease, "lease", 3*time.Second, "how long a dead promoter holds the lease before a standby takes over")
	return cmd
}
