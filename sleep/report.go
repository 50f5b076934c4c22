package sleep

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/renameio/v2"

	"github.com/exocortex/exocortex/memory"
)

// PhaseSummary is what one phase found and decided. It is journaled with the
// phase's plan, so it holds nothing that varies between two runs deciding the
// same thing (no durations, no wall-clock times).
type PhaseSummary struct {
	Phase Phase `json:"phase"`
	// Examined counts what the phase looked at (staging entries, records,
	// entities).
	Examined int `json:"examined"`
	// Changes counts the memory events the phase writes.
	Changes int `json:"changes"`
	// Counts are the phase's own tallies, e.g. "merged", "archived:fragments".
	Counts map[string]int `json:"counts,omitempty"`
	// Examples are a few of its decisions, in a fixed order.
	Examples []Example `json:"examples,omitempty"`
	// Notes say what limited the phase (nothing to read, no vectors, ...).
	Notes []string `json:"notes,omitempty"`
	// Checkpoint is how far in staging.jsonl the ingest phase read.
	Checkpoint *StagingCheckpoint `json:"checkpoint,omitempty"`
}

func (s *PhaseSummary) count(key string, n int) {
	if n == 0 {
		return
	}
	if s.Counts == nil {
		s.Counts = map[string]int{}
	}
	s.Counts[key] += n
}

// maxExamples bounds the examples a phase keeps.
const maxExamples = 8

func (s *PhaseSummary) example(e Example) {
	if len(s.Examples) < maxExamples {
		s.Examples = append(s.Examples, e)
	}
}

// Example is one decision, shown in the report.
type Example struct {
	// Action is ingest, merge, summary, decay, quarantine, adjudicate or resolve.
	Action string          `json:"action"`
	ID     string          `json:"id"`
	Text   string          `json:"text,omitempty"`
	Others []ExampleRecord `json:"others,omitempty"`
	Reason string          `json:"reason,omitempty"`
}

// ExampleRecord is a record an example involves (a merged duplicate, a source).
type ExampleRecord struct {
	ID         string  `json:"id"`
	Text       string  `json:"text"`
	Similarity float64 `json:"similarity,omitempty"`
}

// StagingCheckpoint is a position in staging.jsonl: the last record read.
type StagingCheckpoint struct {
	Seq uint64    `json:"seq"`
	TS  time.Time `json:"ts,omitzero"`
}

// PhaseReport is a phase's summary as this process saw it.
type PhaseReport struct {
	PhaseSummary
	// Status is "ran", "resumed" (its plan was partly applied by an earlier
	// process), "done earlier" (finished by an earlier process) or "not asked".
	Status  string  `json:"status"`
	Seconds float64 `json:"seconds"`
}

// Change is one planned memory event, listed by a dry run.
type Change struct {
	Phase  Phase    `json:"phase"`
	Action string   `json:"action"` // upsert, archive, merge
	ID     string   `json:"id"`
	Into   string   `json:"into,omitempty"`
	From   []string `json:"from,omitempty"`
	Reason string   `json:"reason,omitempty"`
}

// Shape is the memory's size and age at one moment.
type Shape struct {
	Records  int         `json:"records"`
	Active   int         `json:"active"`
	Archived int         `json:"archived"`
	Areas    []AreaShape `json:"areas"`
	// Ages counts active records by age (time since creation).
	Ages []AgeBucket `json:"ages"`
}

// AreaShape counts one area's records.
type AreaShape struct {
	Area     string `json:"area"`
	Active   int    `json:"active"`
	Archived int    `json:"archived"`
}

// AgeBucket is one bar of the age histogram.
type AgeBucket struct {
	Label string `json:"label"`
	Count int    `json:"count"`
}

var ageBuckets = []struct {
	label string
	upto  time.Duration
}{
	{"< 1 day", 24 * time.Hour},
	{"1-7 days", 7 * 24 * time.Hour},
	{"1-4 weeks", 30 * 24 * time.Hour},
	{"1-3 months", 91 * 24 * time.Hour},
	{"3-12 months", 365 * 24 * time.Hour},
	{"1-2 years", 730 * 24 * time.Hour},
	{"> 2 years", math.MaxInt64},
}

// shapeOf measures records at now.
func shapeOf(recs []*memory.Record, now time.Time) Shape {
	sh := Shape{Records: len(recs)}
	areas := map[string]*AreaShape{}
	ages := make([]int, len(ageBuckets))
	for _, r := range recs {
		a := areas[r.Area]
		if a == nil {
			a = &AreaShape{Area: r.Area}
			areas[r.Area] = a
		}
		if !r.Active() {
			a.Archived++
			sh.Archived++
			continue
		}
		a.Active++
		sh.Active++
		age := now.Sub(r.Created)
		for i, b := range ageBuckets {
			if age < b.upto {
				ages[i]++
				break
			}
		}
	}
	for _, k := range sortedKeys(areas) {
		sh.Areas = append(sh.Areas, *areas[k])
	}
	for i, b := range ageBuckets {
		sh.Ages = append(sh.Ages, AgeBucket{Label: b.label, Count: ages[i]})
	}
	return sh
}

// Report is the outcome of a run: what each phase did, the memory's shape
// before and after, and where the Markdown report went.
type Report struct {
	Run        string        `json:"run"`
	Now        time.Time     `json:"now"`
	DryRun     bool          `json:"dry_run,omitempty"`
	Resumed    bool          `json:"resumed,omitempty"`
	Store      string        `json:"store"`
	Vectors    string        `json:"vectors"`
	Summarizer string        `json:"summarizer"`
	Params     Params        `json:"params"`
	Phases     []PhaseReport `json:"phases"`
	Before     Shape         `json:"before"`
	After      Shape         `json:"after"`
	// Changes counts the memory events of the run (all processes).
	Changes int `json:"changes"`
	// Written counts the journal records this process wrote.
	Written   int      `json:"written"`
	StateHash string   `json:"state_hash"`
	Request   *Request `json:"request,omitempty"`
	Notices   []string `json:"notices,omitempty"`
	// Plan lists every change of a dry run.
	Plan       []Change `json:"plan,omitempty"`
	Seconds    float64  `json:"seconds"`
	ReportPath string   `json:"report_path,omitempty"`
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// phaseResult is a phase's one-line result for the summary table.
func (r *Report) phaseResult(p PhaseReport) string {
	c := p.Counts
	if p.Status == "not asked" {
		return "not asked"
	}
	var s string
	switch p.Phase {
	case Ingest:
		s = fmt.Sprintf("%d new records from staging.jsonl; %d already ingested, %d not memories", c["ingested"], c["already_ingested"], c["not_memories"])
	case Dedup:
		s = fmt.Sprintf("%d groups of near-duplicates: %d records merged into their canonical record", c["groups"], c["merged"])
	case Consolidate:
		s = fmt.Sprintf("%d clusters of related records gained a summary (%d already had one)", c["summaries"], c["already_summarized"])
	case Decay:
		s = fmt.Sprintf("%d records archived below strength %.2f; %d pinned and %d restored by hand exempt", c["archived"], r.Params.DecayThreshold, c["exempt_pinned"], c["exempt_restored"])
	case Loop:
		s = fmt.Sprintf("%d loop-period records: %d corroborated, %d quarantined", c["loop_records"], c["corroborated"], c["quarantined"])
	case Ontology:
		s = fmt.Sprintf("%d entities merged into %d; %d relationships appended", c["merged"], c["groups"], c["relationships_appended"]+c["same_as_appended"])
	}
	return s
}

// WriteMarkdown writes the report a person reads. Apart from the run's time it
// depends only on what the run decided.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	title := "Sleep report"
	if r.DryRun {
		title = "Sleep plan (dry run: nothing was changed)"
	}
	fmt.Fprintf(&b, "# %s %s\n\n", title, r.Run)
	fmt.Fprintf(&b, "- Time: %s (the run's clock: ages and decay are measured from it)\n", r.Now.UTC().Format("2006-01-02 15:04:05 UTC"))
	fmt.Fprintf(&b, "- Vectors: %s\n- Summaries: %s\n", r.Vectors, r.Summarizer)
	if r.Resumed {
		b.WriteString("- Resumed: an earlier process began this run and stopped; this one finished it.\n")
	}
	if r.Request != nil {
		fmt.Fprintf(&b, "- Requested by session %s at %s: %s\n", r.Request.Session, r.Request.RequestedUTC, strings.Join(r.Request.Reasons, "; "))
	}
	fmt.Fprintf(&b, "- Changes: %d memory events", r.Changes)
	if r.DryRun {
		b.WriteString(" would be written")
	}
	b.WriteString("\n\n## Phases\n\n| phase | examined | changes | result |\n|---|---:|---:|---|\n")
	for _, p := range r.Phases {
		fmt.Fprintf(&b, "| %d %s | %d | %d | %s |\n", p.Phase, p.Phase, p.Examined, p.Changes, mdCell(r.phaseResult(p)))
	}

	b.WriteString("\n## Size and age\n\n| area | active before | active after | archived before | archived after |\n|---|---:|---:|---:|---:|\n")
	areas := map[string][2]AreaShape{}
	for _, a := range r.Before.Areas {
		x := areas[a.Area]
		x[0] = a
		areas[a.Area] = x
	}
	for _, a := range r.After.Areas {
		x := areas[a.Area]
		x[1] = a
		areas[a.Area] = x
	}
	for _, name := range sortedKeys(areas) {
		x := areas[name]
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d |\n", name, x[0].Active, x[1].Active, x[0].Archived, x[1].Archived)
	}
	fmt.Fprintf(&b, "| **all** | %d | %d | %d | %d |\n", r.Before.Active, r.After.Active, r.Before.Archived, r.After.Archived)
	b.WriteString("\nActive records per area after the run:\n\n```\n")
	var perArea []AgeBucket
	for _, a := range r.After.Areas {
		perArea = append(perArea, AgeBucket{Label: a.Area, Count: a.Active})
	}
	b.WriteString(histogram(perArea, 40))
	b.WriteString("```\n\nAge of the active records after the run:\n\n```\n")
	b.WriteString(histogram(r.After.Ages, 40))
	b.WriteString("```\n")

	for _, p := range r.Phases {
		if len(p.Examples) == 0 && len(p.Notes) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n## %s\n\n", sectionTitle(p.Phase))
		for _, n := range p.Notes {
			fmt.Fprintf(&b, "- Note: %s\n", n)
		}
		if keys := countKeys(p.Counts); len(keys) > 0 {
			var parts []string
			for _, k := range keys {
				parts = append(parts, fmt.Sprintf("%s %d", strings.ReplaceAll(k, "_", " "), p.Counts[k]))
			}
			fmt.Fprintf(&b, "- Counts: %s\n", strings.Join(parts, ", "))
		}
		if len(p.Examples) > 0 {
			b.WriteString("\n")
		}
		for _, e := range p.Examples {
			fmt.Fprintf(&b, "- **%s** `%s`", e.Action, e.ID)
			if e.Text != "" {
				fmt.Fprintf(&b, ": %s", mdQuote(e.Text))
			}
			b.WriteString("\n")
			if e.Reason != "" {
				fmt.Fprintf(&b, "  - why: %s\n", e.Reason)
			}
			for _, o := range e.Others {
				fmt.Fprintf(&b, "  - `%s`", o.ID)
				if o.Similarity > 0 {
					fmt.Fprintf(&b, " (similarity %.3f)", o.Similarity)
				}
				fmt.Fprintf(&b, ": %s\n", mdQuote(o.Text))
			}
		}
	}
	if len(r.Notices) > 0 {
		b.WriteString("\n## Notices\n\n")
		for _, n := range r.Notices {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	fmt.Fprintf(&b, "\n`exocortex memory why ID` shows the journal events behind any change; `exocortex memory restore ID` brings an archived record back.\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func sectionTitle(p Phase) string {
	switch p {
	case Ingest:
		return "Ingested from staging.jsonl"
	case Dedup:
		return "Merges"
	case Consolidate:
		return "Summaries"
	case Decay:
		return "Archived by decay"
	case Loop:
		return "Loop adjudication"
	case Ontology:
		return "Ontology"
	}
	return p.String()
}

// countKeys lists the counts to show, in order.
func countKeys(m map[string]int) []string { return sortedKeys(m) }

// histogram draws counts as horizontal bars of Unicode blocks, width columns
// for the largest.
func histogram(buckets []AgeBucket, width int) string {
	most, label := 0, 0
	for _, b := range buckets {
		most = max(most, b.Count)
		label = max(label, utf8.RuneCountInString(b.Label))
	}
	eighths := []string{"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"}
	var out strings.Builder
	for _, b := range buckets {
		bar := ""
		if most > 0 {
			n := b.Count * width * 8 / most
			if b.Count > 0 && n == 0 {
				n = 1
			}
			bar = strings.Repeat("█", n/8) + eighths[n%8]
		}
		fmt.Fprintf(&out, "%-*s %s %d\n", label, b.Label, bar, b.Count)
	}
	return out.String()
}

func mdCell(s string) string { return strings.ReplaceAll(s, "|", "\\|") }

// mdQuote shortens a record's text to one line for the report.
func mdQuote(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > 160 {
		s = string([]rune(s)[:160]) + "…"
	}
	return "\u201c" + s + "\u201d"
}

// shorten cuts a text for an example.
func shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > n {
		s = string([]rune(s)[:n]) + "…"
	}
	return s
}

// writeReportFiles writes RUN.md into dir (atomically) and returns its path.
func writeReportFiles(dir string, r *Report) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("sleep: creating the report directory %s: %w", dir, err)
	}
	path := filepath.Join(dir, r.Run+".md")
	var b strings.Builder
	if err := r.WriteMarkdown(&b); err != nil {
		return "", err
	}
	if err := writeAtomic(path, []byte(b.String())); err != nil {
		return "", err
	}
	return path, nil
}

// writeAtomic writes a file through a temporary file and a rename.
func writeAtomic(path string, data []byte) error {
	if err := renameio.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("sleep: writing %s: %w", path, err)
	}
	return nil
}

func sortChanges(cs []Change) {
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].Phase < cs[j].Phase })
}
