package main

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/memory/natsjournal"
	"github.com/exocortex/exocortex/staging"
)

func memMigrateCmd(f *memoryFlags) *cobra.Command {
	var to, from string
	cmd := &cobra.Command{
		Use:   "migrate --to nats://HOST:4222 | --to DIR",
		Short: "Move the journal to a NATS JetStream stream, or from one back to a local directory, verified by state hash",
		Long: `migrate copies every journal record, with its sequence number and timestamp,
and replays both copies from sequence 1 to check they give the same state hash.

  --to nats://host:4222[?stream=NAME&creds=FILE…]
      copies the store's journal file (the store given by --dir, or the home's)
      into an empty stream. Stop every session using the store first: the
      journal's lock is taken. Then set memory.journal (or EXOCORTEX_NATS_URL)
      to the same URL: the store directory is already this host's replica.
  --to DIR
      copies the shared stream (--from URL, else memory.journal or
      EXOCORTEX_NATS_URL) into DIR/journal.jsonl; DIR must have no journal.
      Point --dir at DIR (or unset memory.journal, with DIR as the home's
      memory directory) to use it.

A migration that was stopped resumes: the target may hold a prefix of the
source. --json prints the report.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelWarn}))
			if to == "" {
				return fmt.Errorf("memory migrate: --to is required: a nats:// URL or a directory")
			}
			var src, dst memory.Journal
			if natsjournal.IsURL(to) {
				dir, err := f.storeDir()
				if err != nil {
					return err
				}
				path := filepath.Join(dir, memory.JournalFile)
				if _, err := os.Stat(path); err != nil {
					return fmt.Errorf("memory migrate: the store %s has no journal (%w): nothing to migrate", dir, err)
				}
				lj, err := memory.OpenLocalJournal(ctx, path, staging.Options{Logger: log})
				if err != nil {
					return fmt.Errorf("memory migrate: %w (stop the sessions using the store and run it again)", err)
				}
				defer lj.Close()
				nj, err := natsjournal.OpenURL(ctx, to, log)
				if err != nil {
					return err
				}
				defer nj.Close()
				src, dst = lj, nj
			} else {
				if from == "" {
					from = os.Getenv("EXOCORTEX_NATS_URL")
				}
				if from == "" {
					if _, cfg, err := f.loadConfig(); err == nil {
						from = cfg.Memory.Journal
					}
				}
				if from == "" {
					return fmt.Errorf("memory migrate: --to %s is a directory, so the source is a stream: give --from nats://… (or set memory.journal)", to)
				}
				nj, err := natsjournal.OpenURL(ctx, from, log)
				if err != nil {
					return err
				}
				defer nj.Close()
				path := filepath.Join(to, memory.JournalFile)
				if err := os.MkdirAll(to, 0o700); err != nil {
					return fmt.Errorf("memory migrate: %w", err)
				}
				lj, err := memory.OpenLocalJournal(ctx, path, staging.Options{Logger: log})
				if err != nil {
					return fmt.Errorf("memory migrate: %w", err)
				}
				defer lj.Close()
				src, dst = nj, lj
			}
			last := time.Now()
			rep, err := memory.MigrateJournal(ctx, src, dst, func(done, total uint64) {
				if time.Since(last) > time.Second || done == total {
					last = time.Now()
					fmt.Fprintf(cmd.ErrOrStderr(), "migrate: %d of %d records\n", done, total)
				}
			})
			if err != nil {
				return err
			}
			if f.json {
				return printJSON(cmd.OutOrStdout(), rep)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "migrated %d records (%d copied) from %s to %s in %s\nverified: both replay to state hash %s\n",
				rep.Records, rep.Copied, rep.From, rep.To, rep.Duration.Round(time.Millisecond), rep.StateHash)
			return nil
		},
	}
	cmd.Flags().StringVar(&to, "to", "", "the target: a nats:// URL (an empty stream) or a directory (without a journal)")
	cmd.Flags().StringVar(&from, "from", "", "with --to DIR: the stream to copy (default memory.journal or EXOCORTEX_NATS_URL)")
	return cmd
}
