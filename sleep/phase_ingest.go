package sleep

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/staging"
)

// Phase 0, ingest: the records that sessions and tools appended to
// staging.jsonl since the last run become memories.
//
// The run reads from the checkpoint the last ingest journaled (the sequence
// number and time of the last staging record it read). If the record at that
// position is not the one remembered, the file was replaced: it is read from
// the start, and what was ingested before is recognised by content. A memory's
// id is derived from its area and text (contentID), so an entry ingested once
// — by this run, an earlier one, or a run that was killed — is never ingested
// twice, and the same entry twice in the file makes one memory.
//
// What each kind becomes (staging kinds as the built-in extensions write them):
//
//	note      main (or the "area" the note names): "TITLE: TEXT", its tags + note
//	artifact  fragments: "Artifact PATH: TEXT", tags artifact
//	memorize  fragments: "Asked: ... / Answered: ..." (or why it stopped),
//	          tags episode and loop_period when written during a loop
//	insight   main: the sentence, tags insight and its type
//
// Other kinds are not memories and are counted as such.

// Staging kinds the ingest phase reads (the strings the extensions write).
const (
	StagingNote     = "note"
	StagingArtifact = "artifact"
	StagingMemorize = "memorize"
	StagingInsight  = "insight"
)

// stagingPayload is the union of the fields the staging kinds use.
type stagingPayload struct {
	// note / artifact
	Text      string   `json:"text"`
	Title     string   `json:"title"`
	Path      string   `json:"path"`
	Tags      []string `json:"tags"`
	Area      string   `json:"area"`
	RequestID string   `json:"request_id"`
	MessageID string   `json:"message_id"`
	Tool      string   `json:"tool"`
	// memorize
	User       string   `json:"user"`
	Response   string   `json:"response"`
	StopReason string   `json:"stop_reason"`
	Domain     string   `json:"domain"`
	Tools      []string `json:"tools"`
	LoopPeriod bool     `json:"loop_period"`
	// insight
	Type   string `json:"type"`
	Source string `json:"source"`
}

// fromStaging turns a staging record into a memory, or says why it is none.
func fromStaging(r staging.Record) (memory.UpsertEvent, string) {
	var p stagingPayload
	if err := json.Unmarshal(r.Payload, &p); err != nil {
		return memory.UpsertEvent{}, "payload is not an object"
	}
	u := memory.UpsertEvent{Area: memory.AreaMain}
	imp := 0.5
	switch r.Kind {
	case StagingNote:
		u.Text = strings.TrimSpace(p.Text)
		if t := strings.TrimSpace(p.Title); t != "" && u.Text != "" {
			u.Text = t + ": " + u.Text
		} else if u.Text == "" {
			u.Text = t
		}
		if p.Area != "" && memory.ValidArea(p.Area) == nil {
			u.Area = p.Area
		}
		u.Tags = append(append([]string{}, p.Tags...), "note")
		imp = 0.6
	case StagingArtifact:
		u.Area = memory.AreaFragments
		if p.Path == "" {
			return u, "artifact without a path"
		}
		u.Text = "Artifact " + p.Path
		if t := strings.TrimSpace(p.Text); t != "" {
			u.Text += ": " + t
		}
		u.Tags = append(append([]string{}, p.Tags...), "artifact")
		imp = 0.4
	case StagingMemorize:
		u.Area = memory.AreaFragments
		if strings.TrimSpace(p.User) == "" {
			return u, "episode without a request"
		}
		u.Text = "Asked: " + strings.TrimSpace(p.User)
		switch {
		case strings.TrimSpace(p.Response) != "":
			u.Text += "\nAnswered: " + strings.TrimSpace(p.Response)
		case p.StopReason != "":
			u.Text += "\nStopped: " + p.StopReason
		}
		u.Tags = []string{"episode"}
		if p.Domain != "" {
			u.Tags = append(u.Tags, "domain:"+strings.SplitN(p.Domain, "+", 2)[0])
		}
		if p.LoopPeriod {
			u.Tags = append(u.Tags, TagLoopPeriod)
			imp = 0.2
		} else {
			imp = 0.4
		}
	case StagingInsight:
		u.Text = strings.TrimSpace(p.Text)
		u.Tags = []string{"insight"}
		if p.Type != "" {
			u.Tags = append(u.Tags, p.Type)
		}
		if p.Type == "decision" {
			imp = 0.7
		} else {
			imp = 0.6
		}
	default:
		return u, "kind " + r.Kind
	}
	if strings.TrimSpace(u.Text) == "" {
		return u, "empty text"
	}
	u.Importance = &imp
	norm := strings.Join(strings.Fields(u.Text), " ")
	u.ID = contentID("stg-", u.Area, norm)
	created := r.TS.UTC()
	u.Created = &created
	u.Metadata = map[string]any{
		"staging_seq":  r.Seq,
		"staging_kind": r.Kind,
		"content_hash": contentID("sha256:", u.Area, norm),
	}
	msg := p.MessageID
	if msg == "" {
		msg = p.RequestID
	}
	u.Source = memory.Source{Session: r.Session, Message: msg, Source: "sleep:ingest"}
	u.Reason = fmt.Sprintf("ingested from staging.jsonl seq %d (%s)", r.Seq, r.Kind)
	return u, ""
}

func (r *runner) planIngest(ctx context.Context) (PhaseSummary, []plannedEvent, error) {
	sum := PhaseSummary{Phase: Ingest}
	path := r.cfg.StagingPath
	if path == "" {
		sum.Notes = append(sum.Notes, "no staging.jsonl was given: nothing to ingest")
		return sum, nil, nil
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		sum.Notes = append(sum.Notes, fmt.Sprintf("%s does not exist yet: nothing to ingest", path))
		cp := r.jv.checkpoint(r.run)
		sum.Checkpoint = &cp
		return sum, nil, nil
	}
	cp := r.jv.checkpoint(r.run)
	since := cp.Seq
	if cp.Seq > 0 {
		// The remembered last record must still be there, unchanged.
		same := false
		_, err := staging.Scan(ctx, path, cp.Seq-1, func(rec staging.Record) error {
			same = rec.Seq == cp.Seq && (cp.TS.IsZero() || rec.TS.Equal(cp.TS))
			return errStop
		})
		if err != nil && !errors.Is(err, errStop) {
			return sum, nil, fmt.Errorf("sleep: reading %s: %w", path, err)
		}
		if !same {
			since = 0
			sum.Notes = append(sum.Notes, fmt.Sprintf("%s was replaced since the last run (its record %d is not the one read then): read from the start; what was ingested before is recognised by content", path, cp.Seq))
		}
	}
	var events []plannedEvent
	seen := map[string]bool{}
	next := StagingCheckpoint{Seq: since, TS: cp.TS}
	if since == 0 {
		next = StagingCheckpoint{}
	}
	bad, err := staging.Scan(ctx, path, since, func(rec staging.Record) error {
		sum.Examined++
		next = StagingCheckpoint{Seq: rec.Seq, TS: rec.TS.UTC()}
		if sum.Examined%1000 == 0 {
			r.progress(Ingest, "reading staging.jsonl", sum.Examined, 0)
		}
		u, why := fromStaging(rec)
		if why != "" {
			sum.count("not_memories", 1)
			return nil
		}
		if r.byID[u.ID] != nil || seen[u.ID] {
			sum.count("already_ingested", 1)
			return nil
		}
		seen[u.ID] = true
		events = append(events, event(memory.KindUpsert, u))
		sum.count("ingested", 1)
		sum.count("ingested:"+u.Area, 1)
		sum.example(Example{Action: "ingest", ID: u.ID, Text: shorten(u.Text, 200), Reason: u.Reason})
		return nil
	})
	if err != nil {
		return sum, nil, fmt.Errorf("sleep: reading %s: %w", path, err)
	}
	if len(bad) > 0 {
		sum.Notes = append(sum.Notes, fmt.Sprintf("%d lines of %s could not be read and were skipped (the next writer moves them to its .quarantine file)", len(bad), path))
	}
	sum.Checkpoint = &next
	return sum, events, nil
}

var errStop = errors.New("stop")
