package memory

import (
	"bufio"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/exocortex/exocortex/memory/fulltext"
	"github.com/exocortex/exocortex/staging"
)

// HistoryEntry is one journal event that mentions a record.
type HistoryEntry struct {
	Seq     uint64          `json:"seq"`
	TS      time.Time       `json:"ts"`
	Kind    string          `json:"kind"`
	Session string          `json:"session,omitempty"`
	Payload json.RawMessage `json:"payload"`
}

// Summary renders the event in one line.
func (h HistoryEntry) Summary() string {
	var p map[string]any
	json.Unmarshal(h.Payload, &p)
	var parts []string
	for _, k := range []string{"reason", "superseded_by", "into", "from", "source", "session", "message", "area", "key"} {
		if v, ok := p[k]; ok && v != "" {
			parts = append(parts, fmt.Sprintf("%s=%v", k, v))
		}
	}
	if t, ok := p["text"].(string); ok {
		if len(t) > 60 {
			t = t[:60] + "…"
		}
		parts = append(parts, fmt.Sprintf("text=%q", t))
	}
	return strings.Join(parts, " ")
}

// History returns every journal event that names id (as id, ids, into, from or
// superseded_by), oldest first, so it also lists events of kinds this build does
// not apply.
func (s *Store) History(ctx context.Context, id string) ([]HistoryEntry, error) {
	var out []HistoryEntry
	err := s.journal.Read(ctx, 0, func(r staging.Record) error {
		if !isMemoryKind(r.Kind) || !strings.Contains(string(r.Payload), id) {
			return nil
		}
		for _, ref := range eventRefs(r.Payload) {
			if ref == id {
				out = append(out, HistoryEntry{Seq: r.Seq, TS: r.TS, Kind: r.Kind, Session: r.Session, Payload: r.Payload})
				break
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("memory: reading the history of %s: %w", id, err)
	}
	return out, nil
}

// ImportLine is one line of an import file.
type ImportLine struct {
	ID         string         `json:"id,omitempty"`
	Area       string         `json:"area"`
	Text       string         `json:"text"`
	Key        string         `json:"key,omitempty"`
	Tags       []string       `json:"tags,omitempty"`
	Metadata   map[string]any `json:"metadata,omitempty"`
	Created    *time.Time     `json:"created,omitempty"`
	Importance *float64       `json:"importance,omitempty"`
	Status     Status         `json:"status,omitempty"`
}

// BadInput is an import line that was not imported.
type BadInput struct {
	Line   int    `json:"line"`
	Reason string `json:"reason"`
}

func (b BadInput) String() string { return fmt.Sprintf("line %d: %s", b.Line, b.Reason) }

// ImportProgress is reported after each committed batch.
type ImportProgress struct {
	Lines    int   // lines read so far
	Imported int   // records committed so far
	Bad      int   // lines rejected so far
	Bytes    int64 // input bytes read so far
	// Committed lists the ids of the batch just committed to the journal: they
	// survive a crash from now on.
	Committed []string
}

// ImportReport sums up an import.
type ImportReport struct {
	Lines    int `json:"lines"`
	Imported int `json:"imported"`
	// Skipped counts lines whose record is already in the store unchanged (an
	// import run again after it was stopped).
	Skipped int        `json:"skipped"`
	Bad     []BadInput `json:"bad,omitempty"`
}

// importID gives an import line without an id or key a stable identity: a hash of
// its position and its text, so that running the same import again (after it was
// killed half-way) finds the records it already wrote instead of duplicating them.
func importID(lineNo int, line string) string {
	h := sha256.Sum256([]byte(strconv.Itoa(lineNo) + "\n" + line))
	return hex.EncodeToString(h[:8])
}

// alreadyIn reports whether the store holds in unchanged, by id or by key.
func (s *Store) alreadyIn(in Input) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var r *Record
	switch {
	case in.ID != "":
		r = s.state.get(in.ID)
	case in.Key != "":
		r = s.state.byKey(in.Area, strings.TrimSpace(in.Key))
	}
	if r == nil || r.Area != in.Area || r.Text != in.Text || r.Key != strings.TrimSpace(in.Key) ||
		!slices.Equal(r.Tags, normTags(in.Tags)) || (in.Status != "" && in.Status != r.Status) {
		return false
	}
	return true
}

// Import reads JSONL records ({id?, area?, text, key?, tags?, metadata?, created?})
// and saves them in batches; a record without an area goes to main, as Put
// puts it. A line that cannot be imported is reported by number
// and skipped; the import goes on. progress, if set, is called after each batch.
//
// Importing is idempotent: a line is identified by its id, else its key, else a
// hash of its line number and text, and a line whose record is already in the
// store unchanged is skipped (counted in Skipped). Text that is not valid UTF-8
// is reported as a bad line, never silently replaced.
func (s *Store) Import(ctx context.Context, r io.Reader, src Source, progress func(ImportProgress)) (ImportReport, error) {
	var rep ImportReport
	br := bufio.NewReaderSize(r, 1<<20)
	var batch []Input
	var lines []int
	var bytesRead int64
	flush := func() error {
		// An invalid input is reported by its line and taken out; the rest of the
		// batch is written. Any other error (a full disk) stops the import.
		for len(batch) > 0 {
			recs, err := s.PutBatch(ctx, batch, src)
			var ie *InputError
			if errors.As(err, &ie) {
				rep.Bad = append(rep.Bad, BadInput{Line: lines[ie.Index], Reason: ie.Err.Error()})
				batch = append(batch[:ie.Index], batch[ie.Index+1:]...)
				lines = append(lines[:ie.Index], lines[ie.Index+1:]...)
				continue
			}
			if err != nil {
				return err
			}
			rep.Imported += len(recs)
			if progress != nil {
				ids := make([]string, len(recs))
				for i, r := range recs {
					ids[i] = r.ID
				}
				progress(ImportProgress{Lines: rep.Lines, Imported: rep.Imported, Bad: len(rep.Bad), Bytes: bytesRead, Committed: ids})
			}
			break
		}
		batch, lines = batch[:0], lines[:0]
		return nil
	}
	for {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			rep.Lines++
			bytesRead += int64(len(line))
			if !utf8.Valid(line) {
				rep.Bad = append(rep.Bad, BadInput{Line: rep.Lines, Reason: invalidUTF8(line)})
			} else if t := strings.TrimSpace(string(line)); t != "" {
				var in ImportLine
				dec := json.NewDecoder(strings.NewReader(t))
				dec.DisallowUnknownFields()
				if derr := dec.Decode(&in); derr != nil {
					rep.Bad = append(rep.Bad, BadInput{Line: rep.Lines, Reason: "not a JSON record: " + derr.Error()})
				} else if strings.TrimSpace(in.Text) == "" {
					rep.Bad = append(rep.Bad, BadInput{Line: rep.Lines, Reason: `"text" is missing or empty`})
				} else if aerr := ValidArea(cmp.Or(in.Area, AreaMain)); aerr != nil {
					rep.Bad = append(rep.Bad, BadInput{Line: rep.Lines, Reason: aerr.Error()})
				} else {
					if in.ID == "" && strings.TrimSpace(in.Key) == "" {
						in.ID = importID(rep.Lines, t)
					}
					// A record without an area goes to main, as Put (and
					// `memory add`) put it.
					in.Area = cmp.Or(in.Area, AreaMain)
					next := Input{ID: in.ID, Area: in.Area, Text: in.Text, Key: in.Key, Tags: in.Tags,
						Metadata: in.Metadata, Created: in.Created, Importance: in.Importance, Status: in.Status}
					if s.alreadyIn(next) {
						rep.Skipped++
					} else {
						batch = append(batch, next)
						lines = append(lines, rep.Lines)
					}
				}
			}
			if len(batch) >= s.opts.BatchSize {
				if ferr := flush(); ferr != nil {
					return rep, ferr
				}
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return rep, fmt.Errorf("memory: reading the import: %w", err)
		}
	}
	return rep, flush()
}

// invalidUTF8 says where a line stops being UTF-8 and what to do about it.
func invalidUTF8(line []byte) string {
	at := 0
	for at < len(line) {
		r, n := utf8.DecodeRune(line[at:])
		if r == utf8.RuneError && n <= 1 {
			break
		}
		at += n
	}
	return fmt.Sprintf("not valid UTF-8 (byte 0x%02x at column %d): convert the file to UTF-8 (e.g. iconv -f latin1 -t utf-8) and import it again", line[at], at+1)
}

// Export writes every record (active and archived) as JSONL, oldest first, in a
// form Import reads back.
func (s *Store) Export(ctx context.Context, w io.Writer) (int, error) {
	areas, err := s.allAreas(ctx)
	if err != nil {
		return 0, err
	}
	recs, err := s.List(ctx, Filter{Areas: areas, Statuses: []Status{StatusActive, StatusArchived}})
	if err != nil {
		return 0, err
	}
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for i, r := range recs {
		if i%1024 == 0 && ctx.Err() != nil {
			return i, ctx.Err()
		}
		created := r.Created
		imp := r.Importance
		if err := enc.Encode(ImportLine{ID: r.ID, Area: r.Area, Text: r.Text, Key: r.Key, Tags: r.Tags, Metadata: r.Metadata,
			Created: &created, Importance: &imp, Status: r.Status}); err != nil {
			return i, fmt.Errorf("memory: exporting record %s: %w", r.ID, err)
		}
	}
	return len(recs), bw.Flush()
}

func (s *Store) allAreas(ctx context.Context) ([]string, error) {
	areas, err := s.areas(ctx)
	if err == nil && len(areas) == 0 {
		return []string{AreaMain}, nil
	}
	return areas, err
}

// areas lists the areas that hold records (of any status), sorted, from the
// counts the writes keep: no pass over the records.
func (s *Store) areas(ctx context.Context) ([]string, error) {
	var areas []string
	err := s.reading(ctx, func() error {
		s.mu.RLock()
		defer s.mu.RUnlock()
		areas = sortedKeys(s.state.kept().byArea)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return areas, nil
}

// ReplayReport is the result of rebuilding a store from its journal.
type ReplayReport struct {
	Events       uint64        `json:"events"`
	Records      int           `json:"records"`
	StateHash    string        `json:"state_hash"`
	FulltextDocs uint64        `json:"fulltext_docs"`
	Vectors      int           `json:"vectors"`
	Duration     time.Duration `json:"duration_ns"`
	// Anomalies lists what is wrong with the journal itself, in words: lines
	// moved to its quarantine file (their records are not in the store), lines
	// that do not parse, sequence numbers out of order. Empty for a sound journal.
	Anomalies []string `json:"anomalies,omitempty"`
	// Gaps counts sequence numbers missing between lines (what a quarantined
	// line leaves behind).
	Gaps uint64 `json:"gaps,omitempty"`
}

// Replay rebuilds the state and both indexes from sequence 1 of the journal at
// journalPath into scratch (which must be empty or absent), without touching the
// journal (it is read without its lock). The report's StateHash equals the live
// store's Hash when the projections are sound.
func Replay(ctx context.Context, journalPath, scratch string, opts Options) (ReplayReport, error) {
	start := time.Now()
	var rep ReplayReport
	if entries, err := os.ReadDir(scratch); err == nil && len(entries) > 0 {
		return rep, fmt.Errorf("memory: the replay directory %s is not empty", scratch)
	}
	if err := os.MkdirAll(scratch, 0o700); err != nil {
		return rep, fmt.Errorf("memory: %w", err)
	}
	if opts.NewVectorIndex == nil {
		opts.NewVectorIndex = NewHNSWIndex
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = defaultBatch
	}
	ft, _, err := fulltext.Open(filepath.Join(scratch, FulltextDir))
	if err != nil {
		return rep, fmt.Errorf("memory: %w", err)
	}
	s := &Store{dir: scratch, opts: opts, log: opts.Logger, state: newState(), ft: ft}
	if s.log == nil {
		s.log = discardLogger()
	}
	if e := opts.Embedder; e != nil {
		s.vec = newVectors(opts.NewVectorIndex, e.ModelID(), e.Dimensions())
	}
	defer ft.Close()
	var pending []string
	seen := map[string]bool{}
	project := func(seq uint64) error {
		if err := s.projectFulltext(pending, seq); err != nil {
			return err
		}
		if err := s.projectVectors(ctx, pending, seq); err != nil {
			return fmt.Errorf("memory: replay: %w", err)
		}
		pending = pending[:0]
		clear(seen)
		return nil
	}
	var last uint64
	bad, err := staging.Scan(ctx, journalPath, 0, func(r staging.Record) error {
		rep.Events++
		switch {
		case r.Seq <= last:
			rep.Anomalies = append(rep.Anomalies, fmt.Sprintf("%s: sequence %d does not follow %d", journalPath, r.Seq, last))
		case r.Seq > last+1:
			rep.Gaps += r.Seq - last - 1
		}
		last = max(last, r.Seq)
		chs, err := s.state.apply(r)
		var be *BadEvent
		switch {
		case errors.As(err, &be):
			// Named, and the replay goes on: the live store may hold the
			// record (Open recovers it from its snapshot where it can).
			rep.Anomalies = append(rep.Anomalies, fmt.Sprintf("%s is damaged: %s; what it recorded is not in the replay", where(journalPath, be), be.Reason))
		case err != nil:
			return fmt.Errorf("memory: replay: journal record %d: %w", r.Seq, err)
		}
		for _, c := range chs {
			if c.content && !seen[c.id] {
				seen[c.id] = true
				pending = append(pending, c.id)
			}
		}
		if len(pending) >= opts.BatchSize {
			return project(r.Seq)
		}
		return nil
	})
	if err != nil {
		return rep, err
	}
	for _, b := range bad {
		rep.Anomalies = append(rep.Anomalies, "unreadable line "+b.String())
	}
	q, err := staging.Quarantined(journalPath)
	if err != nil {
		rep.Anomalies = append(rep.Anomalies, err.Error())
	}
	if len(q) > 0 {
		rep.Anomalies = append(rep.Anomalies, fmt.Sprintf("%d journal line(s) were moved to %s.quarantine and are not in the store: review them, then move that file aside", len(q), journalPath))
		for i, b := range q {
			if i == 5 {
				rep.Anomalies = append(rep.Anomalies, fmt.Sprintf("… and %d more", len(q)-5))
				break
			}
			rep.Anomalies = append(rep.Anomalies, "quarantined "+b.String())
		}
	}
	if err := project(last); err != nil {
		return rep, err
	}
	rep.Records = s.state.Len()
	rep.StateHash = s.state.Hash()
	rep.FulltextDocs, _ = ft.Count()
	if s.vec != nil {
		rep.Vectors = s.vec.count()
	}
	rep.Duration = time.Since(start)
	return rep, nil
}

// JournalPath is the store's journal file.
func (s *Store) JournalPath() string { return s.journal.Path() }

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
