// Package stagelog appends records to the staging logs the built-in extensions
// share with tools and commands: staging.jsonl (notes, artifacts, memorized
// episodes, insights, read by session start-up and by sleep consolidation) and
// the ontology's relationships.jsonl.
//
// A staging log has one writer at a time (staging.Open locks it), and several
// plugins write staging.jsonl (staging_note, the reasoning-state update, the
// memorizer), so Append opens the log, appends and closes it on every call,
// waiting a little while another writer holds the lock, as the staging_note tool
// does. Reading needs no lock: Read scans the file as it is (staging.Scan).
//
// It is the one package of extensions/ that imports the host's staging package:
// the extensions write and read the logs through its Entry and Record, so none
// of them imports staging (extensions/memory_layers_test.go checks it).
package stagelog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/staging"
)

// Paths inside the home directory, and the FileSpec ids that name them in
// manifests (one id, one path: the lint checks it).
const (
	StagingFile       = "staging.jsonl"
	StagingID         = "staging"
	RelationshipsFile = "ontology/relationships.jsonl"
	RelationshipsID   = "ontology_relationships"
)

// Record kinds the built-in extensions write to staging.jsonl (staging_note
// writes "note" and "artifact" too).
const (
	KindArtifact = "artifact"
	KindMemorize = "memorize"
	KindInsight  = "insight"
	// KindRelationship is the kind of relationships.jsonl records.
	KindRelationship = "relationship"
)

// Entry is a record to append: its kind, the session it belongs to and its
// payload (marshalled to a JSON object).
type Entry struct {
	Kind    string
	Session string
	Payload any
}

// Record is one record of a log as read: its sequence number, time, kind,
// session and payload (a JSON object).
type Record struct {
	Seq     uint64
	TS      time.Time
	Kind    string
	Session string
	Payload json.RawMessage
}

// Decode unmarshals the record's payload into dst.
func (r Record) Decode(dst any) error {
	if err := json.Unmarshal(r.Payload, dst); err != nil {
		return fmt.Errorf("decoding the payload of staging record %d (%s): %w", r.Seq, r.Kind, err)
	}
	return nil
}

func recordOf(r staging.Record) Record {
	return Record{Seq: r.Seq, TS: r.TS, Kind: r.Kind, Session: r.Session, Payload: r.Payload}
}

// LockWait is how long Append waits for the other writers: long enough for a
// queue of them (each append holds the lock for one fsync), so that a note is
// not dropped because several plugin processes wrote at once.
const LockWait = 10 * time.Second

// maxRetry bounds the pause between two tries for the lock; the pauses are
// jittered so that waiting writers do not retry in step.
const maxRetry = 100 * time.Millisecond

// File returns a FileSpec for one of the logs.
func File(id, rel string, access exocortexv1.Access, user, doc string) *exocortexv1.FileSpec {
	return &exocortexv1.FileSpec{Id: id, Path: "$EXOCORTEX_HOME/" + rel, Access: access, User: user, Doc: doc}
}

// Append opens the log at path (creating its directory), appends the entries in
// one write and closes it. While another writer holds the lock it retries for up
// to LockWait (the ctx permitting), then returns the lock error naming the
// holder. Appends from several processes at once are serialised by the lock:
// each lands whole, once, with the next sequence number
// (TestConcurrentProcesses).
func Append(ctx context.Context, path string, in []Entry, log *slog.Logger) ([]Record, error) {
	if len(in) == 0 {
		return nil, nil
	}
	entries := make([]staging.Entry, len(in))
	for i, e := range in {
		entries[i] = staging.Entry{Kind: e.Kind, Session: e.Session, Payload: e.Payload}
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("creating the directory of %s: %w", path, err)
	}
	deadline := time.Now().Add(LockWait)
	wait := 25 * time.Millisecond
	for {
		l, err := staging.Open(ctx, path, staging.Options{Sync: staging.SyncEveryAppend, Logger: log})
		if err == nil {
			recs, aerr := l.AppendBatch(ctx, entries)
			cerr := l.Close()
			if aerr != nil {
				return nil, aerr
			}
			out := make([]Record, len(recs))
			for i, r := range recs {
				out[i] = recordOf(r)
			}
			return out, cerr
		}
		var le *staging.LockedError
		if !errors.As(err, &le) || time.Now().Add(wait).After(deadline) {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w (while waiting for the lock: %v)", err, ctx.Err())
		case <-time.After(wait/2 + rand.N(wait/2+1)):
		}
		wait = min(2*wait, maxRetry)
	}
}

// Read calls fn for every record of the log at path with seq above since; a
// missing file has no records. Lines that do not parse are skipped.
func Read(ctx context.Context, path string, since uint64, fn func(Record) error) error {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	_, err := staging.Scan(ctx, path, since, func(r staging.Record) error { return fn(recordOf(r)) })
	return err
}
