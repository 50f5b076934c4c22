package main

import (
	"context"
	"log/slog"
	"path/filepath"

	"github.com/exocortex/exocortex/core/session"
	"github.com/exocortex/exocortex/memory/natsjournal"
	"github.com/exocortex/exocortex/memory/natsjournal/natssession"
)

// Sessions live where the memory journal does: in the home's sessions
// directory, or — when memory.journal (or $EXOCORTEX_NATS_URL) names a NATS
// JetStream server — in the stream's sessions bucket, shared by every host on
// that stream, so a session begun through one host's serve continues through
// another's (docs/memory-nats.md). Attachments, recordings and the
// last-session marker stay in the home's directory either way.

// sessionStore opens the home's session store for the journal setting;
// close releases it.
func sessionStore(ctx context.Context, home, setting string, log *slog.Logger) (st session.Store, close func(), err error) {
	dir := filepath.Join(home, "sessions")
	if setting == "" {
		return session.NewDirStore(dir), func() {}, nil
	}
	cfg, err := natsjournal.ParseURL(setting)
	if err != nil {
		return nil, nil, err
	}
	cfg.Logger = log
	s, err := natssession.Open(ctx, cfg, dir)
	if err != nil {
		return nil, nil, err
	}
	return s, func() { s.Close() }, nil
}

// sessionsLocation names where the sessions of the journal setting live,
// without connecting (for memory stats).
func sessionsLocation(home, setting string) string {
	if cfg, err := natsjournal.ParseURL(setting); setting != "" && err == nil {
		return natsjournal.Redact(cfg.Servers) + " bucket " + cfg.Stream + natssession.BucketSuffix
	}
	return filepath.Join(home, "sessions")
}
