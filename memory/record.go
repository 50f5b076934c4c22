// Package memory is Exocortex's long-term memory: an event-sourced store of text
// records with hybrid (BM25 + vector) recall.
//
// # The journal is the truth
//
// Every change is an event appended to journal.jsonl (a staging.Log): memory.upsert,
// memory.archive, memory.restore, memory.delete, memory.access, memory.merge (see
// events.go). Everything else is a projection that can be rebuilt by replaying the
// journal from sequence 1:
//
//   - the record state; Open maps the state snapshot (state.snap: the state
//     at a journal position, checksummed, written on Close and every 20,000
//     events; format 2 keeps an id-sorted offset table, the creation order and
//     the keyed records beside the records) and replays only the journal after
//     that position. Records are decoded when first read (a search decodes
//     what it looks at), and writes after the open overlay the mapped ones. A
//     snapshot that is damaged, of an unknown format, or that the journal no
//     longer matches (its last record is not where the snapshot says) is
//     reported and the state is rebuilt from the whole journal; so is one
//     whose record turns out undecodable when read (Store.repairState);
//   - the full-text index (memory/fulltext, Bleve BM25), which remembers the last
//     sequence it applied and catches up on open, and is recreated when missing,
//     damaged or not closed cleanly;
//   - the vector index (one HNSW graph per area, saved to vectors.hnsw with the
//     embedding model's id and checksums, mapped into memory on open and used in
//     place), rebuilt the same way, and re-embedded in full when the model
//     changes.
//
// An open verifies state.snap and vectors.hnsw in full unless checked.json
// (CheckedFile) says it did so before for the very version of the file on disk;
// Store.CheckFiles always does.
//
// Replaying gives the same state whatever the time of the replay: timestamps come
// from the journal, and State.Hash encodes the records sorted by id. Applying an
// event is deterministic, and events at or below a projection's applied sequence
// are skipped, so applying twice changes nothing.
//
// # Areas
//
// A record lives in one area: main, fragments, solutions, library, ontology, or a
// custom one. The library area is isolated: a search without an explicit area
// never returns library records.
//
// # Without an embedder
//
// With no Embedder the store runs on BM25 alone, says so in Stats and in every
// search result, and keeps the vector file it has (if any) untouched.
package memory

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Built-in areas.
const (
	AreaMain      = "main"
	AreaFragments = "fragments"
	AreaSolutions = "solutions"
	AreaLibrary   = "library"
	AreaOntology  = "ontology"
)

// Status of a record.
type Status string

const (
	StatusActive   Status = "active"
	StatusArchived Status = "archived"
)

// DefaultImportance is given to records saved without one.
const DefaultImportance = 0.5

// Record is one memory.
type Record struct {
	ID           string         `json:"id"`
	Area         string         `json:"area"`
	Text         string         `json:"text"`
	Key          string         `json:"key,omitempty"` // unique within the area
	Tags         []string       `json:"tags,omitempty"`
	Metadata     map[string]any `json:"metadata,omitempty"`
	Created      time.Time      `json:"created"`
	Updated      time.Time      `json:"updated"`
	Importance   float64        `json:"importance"`
	AccessCount  int64          `json:"access_count"`
	LastAccess   time.Time      `json:"last_access,omitzero"`
	Status       Status         `json:"status"`
	SupersededBy string         `json:"superseded_by,omitempty"`
	Provenance   Provenance     `json:"provenance"`
}

// Provenance says where a record came from.
type Provenance struct {
	Session string `json:"session,omitempty"`
	Message string `json:"message,omitempty"`
	// Source is the plugin or extension that wrote it ("cli", "tool:memory_save", ...).
	Source string `json:"source,omitempty"`
	// Seq is the journal sequence of the event that created the record, UpdatedSeq
	// of the last event that changed it.
	Seq        uint64 `json:"seq"`
	UpdatedSeq uint64 `json:"updated_seq"`
}

// Active reports whether the record is active.
func (r *Record) Active() bool { return r.Status == StatusActive }

func (r *Record) clone() *Record {
	c := *r
	c.Tags = append([]string(nil), r.Tags...)
	if r.Metadata != nil {
		c.Metadata = make(map[string]any, len(r.Metadata))
		for k, v := range r.Metadata {
			c.Metadata[k] = v
		}
	}
	return &c
}

// HasTag reports whether the record carries tag (tags are lower case).
func (r *Record) HasTag(tag string) bool {
	tag = strings.ToLower(strings.TrimSpace(tag))
	for _, t := range r.Tags {
		if t == tag {
			return true
		}
	}
	return false
}

var areaRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// ValidArea checks an area name: lower-case letters, digits, '-' and '_', at most 64.
func ValidArea(a string) error {
	if !areaRE.MatchString(a) {
		return fmt.Errorf("area %q is not valid: use lower-case letters, digits, '-' or '_' (at most 64), e.g. %s", a, AreaMain)
	}
	return nil
}

// normTags lower-cases, trims, de-duplicates and sorts tags, so that equal sets
// encode equally.
func normTags(tags []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range tags {
		t = strings.ToLower(strings.TrimSpace(t))
		if t == "" || seen[t] {
			continue
		}
		seen[t] = true
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}
