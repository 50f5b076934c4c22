package memory

import (
	"encoding/json"
	"strings"
	"time"
)

// Journal event kinds. The version is part of the kind: a change of meaning gets a
// new kind (memory.upsert.v2) and this package keeps applying the old one, so old
// journals replay unchanged. Kinds this build does not know are kept in the
// journal, shown by History, counted in Stats, and otherwise ignored.
const (
	KindUpsert  = "memory.upsert.v1"
	KindArchive = "memory.archive.v1"
	KindRestore = "memory.restore.v1"
	KindDelete  = "memory.delete.v1"
	KindAccess  = "memory.access.v1"
	KindMerge   = "memory.merge.v1"
)

// KindPrefix starts every memory event kind.
const KindPrefix = "memory."

// Source says who wrote an event: it becomes a new record's provenance. The
// journal record's session is used when Session is empty.
type Source struct {
	Session string `json:"session,omitempty"`
	Message string `json:"message,omitempty"`
	Source  string `json:"source,omitempty"`
}

// UpsertEvent creates a record or replaces its content. Fields left empty keep
// nothing of the old record except its id, creation time, access count and
// provenance: an upsert states the whole content.
type UpsertEvent struct {
	ID         string         `json:"id"`
	Area       string         `json:"area"`
	Text       string         `json:"text"`
	Key        string         `json:"key,omitempty"`
	Tags       []string       `json:"tags,omitempty"`
	Metadata   map[string]any `json:"metadata,omitempty"`
	Importance *float64       `json:"importance,omitempty"`
	// Created backdates a new record (imports); ignored for an existing one.
	Created *time.Time `json:"created,omitempty"`
	// Status sets the status (imports); empty means active for a new record and
	// unchanged for an existing one.
	Status Status `json:"status,omitempty"`
	Source
	Reason string `json:"reason,omitempty"`
}

// ArchiveEvent takes a record out of recall without deleting it.
type ArchiveEvent struct {
	ID           string `json:"id"`
	Reason       string `json:"reason,omitempty"`
	SupersededBy string `json:"superseded_by,omitempty"`
	Source
}

// RestoreEvent makes an archived record active again.
type RestoreEvent struct {
	ID     string `json:"id"`
	Reason string `json:"reason,omitempty"`
	Source
}

// DeleteEvent removes a record from the state (the journal keeps its history).
type DeleteEvent struct {
	ID     string `json:"id"`
	Reason string `json:"reason,omitempty"`
	Source
}

// AccessEvent counts a recall of the records.
type AccessEvent struct {
	IDs []string `json:"ids"`
	Source
}

// MergeEvent folds records into another: each From record is archived with
// superseded_by = Into; Into takes the union of the tags, the highest importance,
// the sum of the access counts, and Text when given.
type MergeEvent struct {
	Into   string   `json:"into"`
	From   []string `json:"from"`
	Text   string   `json:"text,omitempty"`
	Reason string   `json:"reason,omitempty"`
	Source
}

// eventRefs lists the record ids an event payload mentions, whatever its kind: the
// generic fields id, ids, into, from and superseded_by. History uses it, so a
// future event kind shows up in "why" as long as it names records this way.
func eventRefs(payload json.RawMessage) []string {
	var p struct {
		ID           string   `json:"id"`
		IDs          []string `json:"ids"`
		Into         string   `json:"into"`
		From         []string `json:"from"`
		SupersededBy string   `json:"superseded_by"`
	}
	if json.Unmarshal(payload, &p) != nil {
		return nil
	}
	var out []string
	for _, s := range append(append([]string{p.ID, p.Into, p.SupersededBy}, p.IDs...), p.From...) {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// EventRefs is eventRefs for the memory service's clients (an MCP server
// telling its subscribers which records an event changed).
func EventRefs(payload json.RawMessage) []string { return eventRefs(payload) }

func isMemoryKind(kind string) bool { return strings.HasPrefix(kind, KindPrefix) }
