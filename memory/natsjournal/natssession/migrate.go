package natssession

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/exocortex/exocortex/core/session"
	"github.com/exocortex/exocortex/memory/natsjournal"
	"github.com/exocortex/exocortex/staging"
)

// MigrateReport is what ImportFiles or ExportFiles did.
type MigrateReport struct {
	From string `json:"from"`
	To   string `json:"to"`
	// Sessions and Records count the source's; Copied is how many records
	// were written (0 on a re-run: the target holds them already).
	Sessions int `json:"sessions"`
	Records  int `json:"records"`
	Copied   int `json:"copied"`
	// Hash is the content hash both sides give (ContentHash); Verified says
	// the target was read back after the copy and matched the source.
	Hash     string   `json:"content_hash"`
	Verified bool     `json:"verified"`
	Skipped  []string `json:"skipped,omitempty"`
	// RecordingLines counts the recorded lines copied with the sessions
	// (memory migrate sets it: replay.Push of each session's recording).
	RecordingLines int           `json:"recording_lines,omitempty"`
	Duration       time.Duration `json:"duration_ns"`
}

// sessionRecords is one session's records, in order.
type sessionRecords map[string][]staging.Record

// ContentHash is a hash of sessions: for each, by name, its name and every
// record's sequence, time, kind, session id and (compacted) payload. A
// session file and its copy in the bucket give the same.
func ContentHash(all map[string][]staging.Record) string {
	names := make([]string, 0, len(all))
	for n := range all {
		names = append(names, n)
	}
	sort.Strings(names)
	h := sha256.New()
	var buf bytes.Buffer
	for _, n := range names {
		fmt.Fprintf(h, "session %s %d\n", n, len(all[n]))
		for _, r := range all[n] {
			buf.Reset()
			if err := json.Compact(&buf, r.Payload); err != nil {
				buf.Write(r.Payload)
			}
			fmt.Fprintf(h, "%d %s %s %s %s\n", r.Seq, r.TS.UTC().Format(time.RFC3339Nano), r.Kind, r.Session, buf.Bytes())
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// readFiles reads the session files under dir (NAME.jsonl; the trash and
// the recordings are not sessions). A line that does not parse is left out
// and named in skipped.
func readFiles(ctx context.Context, dir string) (sessionRecords, []string, error) {
	list, err := session.List(dir)
	if err != nil {
		return nil, nil, err
	}
	out := sessionRecords{}
	var skipped []string
	for _, in := range list {
		if session.ValidateName(in.Name) != nil {
			skipped = append(skipped, in.Path+": not a session name")
			continue
		}
		var recs []staging.Record
		bad, err := staging.Scan(ctx, in.Path, 0, func(r staging.Record) error {
			recs = append(recs, r)
			return nil
		})
		if err != nil {
			return nil, nil, fmt.Errorf("reading session file %s: %w", in.Path, err)
		}
		for _, b := range bad {
			skipped = append(skipped, fmt.Sprintf("%s: %s", in.Path, b))
		}
		if len(recs) > 0 {
			out[in.Name] = recs
		}
	}
	return out, skipped, nil
}

// readBucket reads every session in the bucket.
func (s *Store) readBucket(ctx context.Context) (sessionRecords, error) {
	var names []string
	err := s.watch(ctx, "r.*.1", func(e jetstream.KeyValueEntry) error {
		parts := strings.Split(e.Key(), ".")
		if len(parts) == 3 {
			names = append(names, strings.ReplaceAll(parts[1], "=", "."))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("natssession: listing the sessions' records in %s: %w", s.Location(), err)
	}
	out := sessionRecords{}
	for _, n := range names {
		b := &backend{s: s, name: n}
		var recs []staging.Record
		if err := b.Read(ctx, 0, func(r staging.Record) error { recs = append(recs, r); return nil }); err != nil {
			return nil, err
		}
		out[n] = recs
	}
	return out, nil
}

func count(all sessionRecords) int {
	n := 0
	for _, recs := range all {
		n += len(recs)
	}
	return n
}

// ImportFiles copies the session files under dir (the home's sessions
// directory) into the bucket, record for record, keeping sequence numbers
// and times, then reads the bucket's copy back and compares count and
// ContentHash. A session the bucket holds a prefix of (an import that
// stopped, or a re-run) gets the rest; one the bucket holds a different
// history of is refused, naming it, and nothing more is written to it.
// progress, if set, is called after each session with those done and the
// total.
func (s *Store) ImportFiles(ctx context.Context, dir string, progress func(done, total int)) (MigrateReport, error) {
	start := time.Now()
	rep := MigrateReport{From: dir, To: s.Location()}
	src, skipped, err := readFiles(ctx, dir)
	if err != nil {
		return rep, fmt.Errorf("natssession: migrate: %w", err)
	}
	rep.Skipped, rep.Sessions, rep.Records = skipped, len(src), count(src)
	names := sortedNames(src)
	for i, n := range names {
		copied, err := s.importSession(ctx, n, src[n])
		rep.Copied += copied
		if err != nil {
			return rep, err
		}
		if progress != nil {
			progress(i+1, len(names))
		}
	}
	got, err := s.readBucket(ctx)
	if err != nil {
		return rep, err
	}
	for n := range got {
		if _, ok := src[n]; !ok {
			delete(got, n) // a session begun on the bucket: not this home's
		}
	}
	return s.verify(rep, src, got, start)
}

func sortedNames(all sessionRecords) []string {
	names := make([]string, 0, len(all))
	for n := range all {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (s *Store) verify(rep MigrateReport, src, got sessionRecords, start time.Time) (MigrateReport, error) {
	rep.Hash = ContentHash(src)
	rep.Duration = time.Since(start)
	if len(got) != len(src) || count(got) != rep.Records {
		return rep, fmt.Errorf("natssession: migrate: %s holds %d sessions (%d records) after the copy, the source %d (%d records)", rep.To, len(got), count(got), len(src), rep.Records)
	}
	if h := ContentHash(got); h != rep.Hash {
		return rep, fmt.Errorf("natssession: migrate: the sessions in %s hash to %s after the copy, the source's to %s", rep.To, h, rep.Hash)
	}
	rep.Verified = true
	return rep, nil
}

// importSession writes the records of one session the bucket lacks.
func (s *Store) importSession(ctx context.Context, name string, recs []staging.Record) (int, error) {
	copied := 0
	var size int64
	for i, r := range recs {
		if r.Seq != uint64(i+1) {
			return copied, fmt.Errorf("natssession: migrate: session %q: record %d follows record %d (a session file numbers its records 1, 2, 3, …)", name, r.Seq, i)
		}
		body, _, err := natsjournal.Encode(staging.Entry{Kind: r.Kind, Session: r.Session, Payload: r.Payload}, r.TS)
		if err != nil {
			return copied, fmt.Errorf("natssession: migrate: session %q, record %d: %w", name, r.Seq, err)
		}
		size += int64(len(body))
		key := recordKey("r", name, r.Seq)
		cctx, cancel := context.WithTimeout(ctx, requestTimeout)
		_, err = s.kv.Create(cctx, key, body)
		cancel()
		switch {
		case err == nil:
			copied++
		case errors.Is(err, jetstream.ErrKeyExists):
			if err := s.sameRecord(ctx, name, key, r); err != nil {
				return copied, err
			}
		default:
			return copied, fmt.Errorf("natssession: migrate: session %q: writing %s to %s: %w", name, key, s.Location(), err)
		}
	}
	if copied == 0 {
		return 0, nil
	}
	last := recs[len(recs)-1]
	return copied, s.putInfo(ctx, info{Name: name, Records: last.Seq, Size: size, Modified: last.TS.UTC()})
}

// sameRecord checks the bucket's record under key is r.
func (s *Store) sameRecord(ctx context.Context, name, key string, r staging.Record) error {
	gctx, cancel := context.WithTimeout(ctx, requestTimeout)
	e, err := s.kv.Get(gctx, key)
	cancel()
	if err != nil {
		return fmt.Errorf("natssession: migrate: session %q: reading %s from %s: %w", name, key, s.Location(), err)
	}
	have, err := natsjournal.Decode(r.Seq, e.Value())
	if err != nil {
		return fmt.Errorf("natssession: migrate: session %q, key %s: %w", name, key, err)
	}
	one := func(x staging.Record) string { return ContentHash(map[string][]staging.Record{name: {x}}) }
	if one(have) != one(r) {
		return fmt.Errorf("natssession: migrate: session %q: %s holds another history under that name (record %d differs): rename one of them (/rename, or the file) and run migrate again: %w", name, s.Location(), r.Seq, session.ErrConflict)
	}
	return nil
}

// ExportFiles copies every session in the bucket to a session file under
// dir (NAME.jsonl), keeping sequence numbers and times, then reads the files
// back and compares count and ContentHash. A file holding a prefix of the
// bucket's session gets the rest; one holding another history is refused,
// naming it.
func (s *Store) ExportFiles(ctx context.Context, dir string, progress func(done, total int)) (MigrateReport, error) {
	start := time.Now()
	rep := MigrateReport{From: s.Location(), To: dir}
	src, err := s.readBucket(ctx)
	if err != nil {
		return rep, err
	}
	rep.Sessions, rep.Records = len(src), count(src)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return rep, fmt.Errorf("natssession: migrate: %w", err)
	}
	names := sortedNames(src)
	for i, n := range names {
		copied, err := exportSession(ctx, dir, n, src[n])
		rep.Copied += copied
		if err != nil {
			return rep, err
		}
		if progress != nil {
			progress(i+1, len(names))
		}
	}
	got, _, err := readFiles(ctx, dir)
	if err != nil {
		return rep, err
	}
	for n := range got {
		if _, ok := src[n]; !ok {
			delete(got, n) // a file of this home the bucket never had
		}
	}
	return s.verify(rep, src, got, start)
}

// exportSession appends to dir/NAME.jsonl the records it lacks.
func exportSession(ctx context.Context, dir, name string, recs []staging.Record) (int, error) {
	path := filepath.Join(dir, name+".jsonl")
	log, err := staging.Open(ctx, path, staging.Options{Sync: staging.SyncEveryAppend})
	if err != nil {
		return 0, fmt.Errorf("natssession: migrate: session %q: %w (stop the terminal or serve holding it)", name, err)
	}
	defer log.Close()
	have := 0
	err = log.Read(ctx, 0, func(r staging.Record) error {
		if have >= len(recs) || ContentHash(map[string][]staging.Record{name: {r}}) != ContentHash(map[string][]staging.Record{name: {recs[have]}}) {
			return fmt.Errorf("natssession: migrate: session %q: %s holds another history (record %d differs from the bucket's): rename one of them and run migrate again: %w", name, path, r.Seq, session.ErrConflict)
		}
		have++
		return nil
	})
	if err != nil {
		return 0, err
	}
	rest := recs[have:]
	if len(rest) == 0 {
		return 0, nil
	}
	entries := make([]staging.Entry, len(rest))
	for i, r := range rest {
		entries[i] = staging.Entry{Kind: r.Kind, Session: r.Session, TS: r.TS, Payload: json.RawMessage(r.Payload)}
	}
	if _, err := log.AppendBatch(ctx, entries); err != nil {
		return 0, fmt.Errorf("natssession: migrate: session %q: writing %s: %w", name, path, err)
	}
	if err := log.Close(); err != nil {
		return len(rest), fmt.Errorf("natssession: migrate: session %q: closing %s: %w", name, path, err)
	}
	return len(rest), nil
}
