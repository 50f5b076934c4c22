package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/exocortex/exocortex/config"
	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/memory/natsjournal"
)

// The memory journal is the store's own file unless memory.journal (or
// $EXOCORTEX_NATS_URL) names a NATS JetStream server: then the store is this
// host's replica of the shared stream (docs/memory-nats.md), for every
// client of the memory service alike.

// journalSetting is memory.journal with its environment override, for a
// command that could not read the configuration (the variable still counts).
func journalSetting(cfg config.Config) string {
	if v := os.Getenv("EXOCORTEX_NATS_URL"); v != "" {
		return v
	}
	return cfg.Memory.Journal
}

// sharedJournal is the Options.OpenJournal for the setting, nil for the
// local journal. A setting that is not a NATS URL is an error naming it.
func sharedJournal(setting string, log *slog.Logger) (func(context.Context) (memory.Journal, error), error) {
	if setting == "" {
		return nil, nil
	}
	cfg, err := natsjournal.ParseURL(setting)
	if err != nil {
		return nil, err
	}
	cfg.Logger = log
	return func(ctx context.Context) (memory.Journal, error) {
		return natsjournal.Open(ctx, cfg)
	}, nil
}

// promoted reports whether the home's journal setting sends writes through
// a promoter (?promoter=true).
func (f *memoryFlags) promoted() bool {
	_, cfg, err := f.loadConfig()
	if err != nil {
		return false
	}
	jc, err := natsjournal.ParseURL(journalSetting(cfg))
	return err == nil && jc.Promoted
}

// promoterLine is stats' promoter line: the one holding the lease, or why
// there is none.
func promoterLine(who string, promoted bool) string {
	switch {
	case who != "":
		return who
	case promoted:
		return "none holds the lease: writes wait for one (start `exocortex memory promoter`)"
	default:
		return "none (hosts write the stream directly)"
	}
}
