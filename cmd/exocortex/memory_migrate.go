package main

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/exocortex/exocortex/core/session"
	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/memory/natsjournal"
	"github.com/exocortex/exocortex/memory/natsjournal/natssession"
	"github.com/exocortex/exocortex/replay"
	"github.com/exocortex/exocortex/staging"
)

func memMigrateCmd(f *memoryFlags) *cobra.Command {
	var to, from, sessionsDir string
	var noSessions bool
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

The home's sessions go with the journal: --to nats://… copies the session
files ($EXOCORTEX_HOME/sessions/NAME.jsonl, or --sessions-dir) into the
stream's sessions bucket (STREAM_SESSIONS), --to DIR copies the bucket's
sessions back to files there, each record with its number and time, verified
by reading the copy back (count and content hash). To the bucket, the
sessions' recordings go too (for the dashboard's inspector on every host);
attachments and the terminal's shown lines stay where they are. --no-sessions leaves the
sessions alone.

A migration that was stopped resumes: the target may hold a prefix of the
source (a session too). --json prints the report (the sessions' under
"sessions").`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelWarn}))
			if to == "" {
				return fmt.Errorf("memory migrate: --to is required: a nats:// URL or a directory")
			}
			var src, dst memory.Journal
			shared := from // the stream whose sessions bucket is the other side
			if natsjournal.IsURL(to) {
				shared = to
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
				shared = from
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
			out := migrateOutput{MigrateReport: rep}
			if !noSessions {
				srep, err := migrateSessions(cmd, f, shared, sessionsDir, natsjournal.IsURL(to), log)
				if err != nil {
					return err
				}
				out.Sessions = &srep
			}
			if f.json {
				return printJSON(cmd.OutOrStdout(), out)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "migrated %d records (%d copied) from %s to %s in %s\nverified: both replay to state hash %s\n",
				rep.Records, rep.Copied, rep.From, rep.To, rep.Duration.Round(time.Millisecond), rep.StateHash)
			if s := out.Sessions; s != nil {
				fmt.Fprintf(cmd.OutOrStdout(), "migrated %d sessions, %d records (%d copied) from %s to %s in %s\nverified: both hold the same records, content hash %s\n",
					s.Sessions, s.Records, s.Copied, s.From, s.To, s.Duration.Round(time.Millisecond), s.Hash)
				for _, sk := range s.Skipped {
					fmt.Fprintf(cmd.ErrOrStderr(), "migrate: left out: %s\n", sk)
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&sessionsDir, "sessions-dir", "", "the session files' directory (default $EXOCORTEX_HOME/sessions)")
	cmd.Flags().BoolVar(&noSessions, "no-sessions", false, "migrate the journal only, not the home's sessions")
	cmd.Flags().StringVar(&to, "to", "", "the target: a nats:// URL (an empty stream) or a directory (without a journal)")
	cmd.Flags().StringVar(&from, "from", "", "with --to DIR: the stream to copy (default memory.journal or EXOCORTEX_NATS_URL)")
	return cmd
}

// migrateOutput is migrate's --json report: the journal's, and the
// sessions' under "sessions".
type migrateOutput struct {
	memory.MigrateReport
	Sessions *natssession.MigrateReport `json:"sessions,omitempty"`
}

// migrateSessions copies the session files of dir (the home's sessions when
// "") into the sessions bucket of the stream at url (toBucket), or the
// bucket's sessions back to files there.
func migrateSessions(cmd *cobra.Command, f *memoryFlags, url, dir string, toBucket bool, log *slog.Logger) (natssession.MigrateReport, error) {
	ctx := cmd.Context()
	if dir == "" {
		home, _, err := f.loadConfig()
		if err != nil {
			return natssession.MigrateReport{}, fmt.Errorf("memory migrate: the home's sessions: %w (give --sessions-dir, or --no-sessions)", err)
		}
		dir = filepath.Join(home, "sessions")
	}
	cfg, err := natsjournal.ParseURL(url)
	if err != nil {
		return natssession.MigrateReport{}, err
	}
	cfg.Logger = log
	st, err := natssession.Open(ctx, cfg, dir)
	if err != nil {
		return natssession.MigrateReport{}, fmt.Errorf("memory migrate: %w", err)
	}
	defer st.Close()
	last := time.Now()
	progress := func(done, total int) {
		if time.Since(last) > time.Second || done == total {
			last = time.Now()
			fmt.Fprintf(cmd.ErrOrStderr(), "migrate: %d of %d sessions\n", done, total)
		}
	}
	if !toBucket {
		return st.ExportFiles(ctx, dir, progress)
	}
	rep, err := st.ImportFiles(ctx, dir, progress)
	if err != nil {
		return rep, err
	}
	// The sessions' recordings too, so that the dashboard's inspector of
	// any host shows their turns.
	list, err := session.List(dir)
	if err != nil {
		return rep, err
	}
	for _, in := range list {
		rdir := replay.DirFor(in.Path)
		if _, err := os.Stat(filepath.Join(rdir, replay.EventsFile)); err != nil {
			continue
		}
		m, have, err := st.RecordingOf(ctx, in.Name)
		if err != nil {
			return rep, fmt.Errorf("memory migrate: the recording of session %s: %w", in.Name, err)
		}
		n, err := replay.Push(ctx, rdir, have, m)
		if err != nil {
			return rep, fmt.Errorf("memory migrate: the recording of session %s: %w", in.Name, err)
		}
		rep.RecordingLines += n
	}
	return rep, nil
}
