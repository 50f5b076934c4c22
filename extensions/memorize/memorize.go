// Package memorize holds what the agent keeps from a monologue when it ends
// (monologue_end), and the upkeep of its memory. The memory store is the home's
// memory service, reached through the host (sdk.Call.Memory): the plugin
// declares uses_memory and the areas of WriteAreas.
//
// memorize (order 50; ECE's "memorize at monologue end"): appends one memorize
// record to staging.jsonl for every monologue with an operator message: the
// request, the answer (or why it stopped), the domain (bst_store), the tools used
// and how many failed (evidence ledger) and whether it ran during a loop. The sleep
// consolidation ingests these episodes later; nothing is decided here.
//
// selective_memorizer (order 52, as in the seed) writes the high-signal parts
// straight into the store, so they are recalled in the next monologue:
//   - solutions: a tool call that failed and a later successful call of the same
//     tool make a "problem / what worked" memory in the solutions area (at most
//     MaxSolutions per monologue);
//   - answers: a monologue that answered (not stopped) after at least one
//     successful tool call, outside small talk, makes an "asked / answered" memory
//     in main;
//   - keys are content hashes, so the same solution or answer is updated, not
//     duplicated; memories written during a loop (loop_active) get the loop_period
//     tag and a lower importance.
//
// insight_capture (order 53, as in the seed) appends insight records to
// staging.jsonl: the sentences of the operator's message and of the answer that
// state a decision ("we decided", "let's go with", "I'll use", ...), an intent
// ("I want to", "my goal is", "I need to", ...) or a framing ("think of X as Y",
// "the key question is", "in other words", ...).
//
// memory_classifier (order 55, as in the seed) tags the memories of this
// session that have no axis yet: axis:procedural (the solutions area, or how-to
// text: steps, commands), axis:episodic (what happened: "Asked:", first-person
// past, dates) or axis:semantic (facts); domain:PRIMARY from bst_store; and
// loop_period when loop_active is set, which is how the sleep consolidation finds
// the loop-period memories to adjudicate.
//
// memory_maintenance (order 57, as in the seed), at most once a day
// (maintenance_state): archives, reversibly, memories of main and fragments that
// were never recalled or read, have importance below StaleImportance and have not
// changed for StaleAge; and loop-period memories never adjudicated nor used for
// LoopAge. At most MaxArchive a run.
package memorize

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/exocortex/exocortex/extensions/internal/stagelog"
	"github.com/exocortex/exocortex/extensions/internal/textfacts"
	"github.com/exocortex/exocortex/extensions/internal/turn"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

// The memory areas the extensions name (package memory's).
const (
	AreaMain      = "main"
	AreaFragments = "fragments"
	AreaSolutions = "solutions"
)

// WriteAreas are the memory areas the extensions write: the selective
// memorizer's solutions and answers (solutions, main), and the classifier's
// and maintenance's tags and archives of the session's and the stale records
// (main, fragments, solutions, and whatever area a record of the session is
// in: "*").
func WriteAreas() []string { return []string{"*"} }

// Rules' limits.
const (
	MaxSolutions    = 3
	StaleImportance = 0.4
	StaleAge        = 90 * 24 * time.Hour
	LoopAge         = 30 * 24 * time.Hour
	MaxArchive      = 100
	MaintenanceGap  = 24 * time.Hour
)

func bstKey() sdk.Key[*exocortexv1.BeliefState] { return sdk.KeyOf[*exocortexv1.BeliefState]() }
func loopKey() sdk.Key[*exocortexv1.LoopActive] { return sdk.KeyOf[*exocortexv1.LoopActive]() }
func ledgerKey() sdk.Key[*exocortexv1.EvidenceLedger] {
	return sdk.KeyOf[*exocortexv1.EvidenceLedger]()
}
func maintKey() sdk.Key[*exocortexv1.MaintenanceState] {
	return sdk.KeyOf[*exocortexv1.MaintenanceState]()
}

// Files declares what the package's extensions write.
func Files() []*exocortexv1.FileSpec {
	return []*exocortexv1.FileSpec{
		stagelog.File(stagelog.StagingID, stagelog.StagingFile, exocortexv1.Access_ACCESS_WRITE, "memorize",
			`Episodes of finished monologues: kind "memorize", payload {request_id, user, response, stop_reason, domain, tools, failures, loop_period}.`),
		stagelog.File(stagelog.StagingID, stagelog.StagingFile, exocortexv1.Access_ACCESS_WRITE, "insight_capture",
			`Decisions, intents and framings: kind "insight", payload {type, text, source, domain, request_id}.`),
		{Id: "memory_store", Path: "$EXOCORTEX_HOME/" + memoryDir, Access: exocortexv1.Access_ACCESS_READ_WRITE, User: "selective_memorizer", Doc: "Solutions and answers worth recalling."},
		{Id: "memory_store", Path: "$EXOCORTEX_HOME/" + memoryDir, Access: exocortexv1.Access_ACCESS_READ_WRITE, User: "memory_classifier", Doc: "Tags the session's memories with their axis, domain and loop period."},
		{Id: "memory_store", Path: "$EXOCORTEX_HOME/" + memoryDir, Access: exocortexv1.Access_ACCESS_READ_WRITE, User: "memory_maintenance", Doc: "Archives stale memories."},
	}
}

// memoryDir is memorytools.StoreDir (not imported, to keep this package free
// of the tools).
const memoryDir = "memory"

// operatorMessage is the operator's message of the monologue that just ended.
func operatorMessage(c *sdk.Call, hist []*exocortexv1.Message) *exocortexv1.Message {
	id := c.Context().GetMessageId()
	for i := len(hist) - 1; i >= 0; i-- {
		if hist[i].GetId() == id && turn.IsOperator(hist[i]) {
			return hist[i]
		}
	}
	return turn.LastOperator(hist)
}

func hash(parts ...string) string {
	h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(h[:8])
}

// Episode is the payload of a memorize record.
type Episode struct {
	RequestID  string   `json:"request_id"`
	MessageID  string   `json:"message_id,omitempty"`
	User       string   `json:"user"`
	Response   string   `json:"response,omitempty"`
	StopReason string   `json:"stop_reason,omitempty"`
	Domain     string   `json:"domain,omitempty"`
	Tools      []string `json:"tools,omitempty"`
	ToolCalls  int      `json:"tool_calls"`
	Failures   int      `json:"failures"`
	LoopPeriod bool     `json:"loop_period"`
}

// Memorize is the memorize extension.
type Memorize struct {
	Home func() (string, error)
}

// Spec declares it.
func (e Memorize) Spec() sdk.Spec {
	return sdk.Spec{
		Name:        "memorize",
		Hooks:       []sdk.Hook{sdk.MonologueEnd(e)},
		Order:       50,
		Reads:       []sdk.KeyRef{bstKey(), loopKey(), ledgerKey()},
		Description: "Appends the finished monologue as a memorize episode to staging.jsonl (request, answer, domain, tools, loop period) for the sleep consolidation.",
		// The monologue's operator message may be further back than the recent
		// messages reach.
		ReadsHistory: true,
	}
}

// MonologueEnd records the episode.
func (m Memorize) MonologueEnd(ctx context.Context, c *sdk.Call, req *exocortexv1.MonologueEndRequest) (*exocortexv1.MonologueEndResponse, error) {
	user := operatorMessage(c, req.GetHistory())
	if user == nil || m.Home == nil {
		return nil, nil
	}
	home, err := m.Home()
	if err != nil {
		return nil, err
	}
	bs, _ := bstKey().Get(c)
	la, _ := loopKey().Get(c)
	l, _ := ledgerKey().Get(c)
	ep := Episode{RequestID: c.Context().GetRequestId(), MessageID: user.GetId(), User: textfacts.Shorten(user.GetContent(), 2000),
		Response: textfacts.Shorten(req.GetFinalResponse(), 4000), StopReason: req.GetStopReason(), Domain: bs.GetCompoundSig(), LoopPeriod: la.GetActive()}
	for _, e := range l.GetEntries() {
		ep.ToolCalls++
		if !e.GetOk() {
			ep.Failures++
		}
		if !slices.Contains(ep.Tools, e.GetToolName()) {
			ep.Tools = append(ep.Tools, e.GetToolName())
		}
	}
	_, err = stagelog.Append(ctx, filepath.Join(home, stagelog.StagingFile), []stagelog.Entry{{Kind: stagelog.KindMemorize, Session: c.Context().GetSessionId(), Payload: ep}}, nil)
	if err != nil {
		return nil, fmt.Errorf("memorize: %w", err)
	}
	return nil, nil
}

// Selective is the selective memorizer.
type Selective struct{}

// Spec declares it.
func (e Selective) Spec() sdk.Spec {
	return sdk.Spec{
		Name:        "selective_memorizer",
		Hooks:       []sdk.Hook{sdk.MonologueEnd(e)},
		Order:       52,
		Reads:       []sdk.KeyRef{bstKey(), loopKey(), ledgerKey()},
		Description: "Stores the monologue's high-signal parts in memory: failed-then-fixed tool calls as solutions, checked answers in main; tags loop-period ones.",
		// The monologue's operator message may be further back than the recent
		// messages reach.
		ReadsHistory: true,
	}
}

// Select picks the memories of a monologue.
func Select(user, answer, stop, domain string, l *exocortexv1.EvidenceLedger, loop bool) []*exocortexv1.MemoryInput {
	var out []*exocortexv1.MemoryInput
	imp := func(v float64) *float64 {
		if loop {
			v /= 2
		}
		return &v
	}
	tags := func(extra ...string) []string {
		t := append([]string{}, extra...)
		if domain != "" {
			t = append(t, domain)
		}
		if loop {
			t = append(t, "loop_period")
		}
		return t
	}
	es := l.GetEntries()
	used := map[int]bool{}
	for i, fail := range es {
		if fail.GetOk() || len(out) >= MaxSolutions {
			continue
		}
		for j := i + 1; j < len(es); j++ {
			fix := es[j]
			if fix.GetToolName() != fail.GetToolName() || !fix.GetOk() || used[j] {
				continue
			}
			used[j] = true
			text := fmt.Sprintf("Problem: %s failed: %s\nWhat worked: %s %s\nResult: %s", fail.GetToolName(), textfacts.Shorten(fail.GetExcerpt(), 300),
				fix.GetToolName(), textfacts.Shorten(fix.GetArgsJson(), 300), textfacts.Shorten(fix.GetExcerpt(), 200))
			out = append(out, &exocortexv1.MemoryInput{Area: AreaSolutions, Key: "sol:" + hash(fail.GetToolName(), fail.GetExcerpt()), Text: text,
				Tags: tags("solution", fail.GetToolName()), Importance: imp(0.6)})
			break
		}
	}
	okCalls := 0
	for _, e := range es {
		if e.GetOk() {
			okCalls++
		}
	}
	if stop == "" && len(strings.TrimSpace(answer)) >= 40 && okCalls > 0 && domain != "conversation" && domain != "" && user != "" {
		out = append(out, &exocortexv1.MemoryInput{Area: AreaMain, Key: "ans:" + hash(user), Text: fmt.Sprintf("Asked: %s\nAnswer: %s", textfacts.Shorten(user, 400), textfacts.Shorten(answer, 1500)),
			Tags: tags("answer"), Importance: imp(0.5)})
	}
	return out
}

// MonologueEnd stores the selected memories.
func (s Selective) MonologueEnd(ctx context.Context, c *sdk.Call, req *exocortexv1.MonologueEndRequest) (*exocortexv1.MonologueEndResponse, error) {
	bs, _ := bstKey().Get(c)
	la, _ := loopKey().Get(c)
	l, _ := ledgerKey().Get(c)
	user := ""
	if m := operatorMessage(c, req.GetHistory()); m != nil {
		user = m.GetContent()
	}
	ins := Select(user, req.GetFinalResponse(), req.GetStopReason(), bs.GetPrimaryDomain(), l, la.GetActive())
	if len(ins) == 0 {
		return nil, nil
	}
	if _, err := c.Memory().As("extension:selective_memorizer").Save(ctx, ins...); err != nil {
		return nil, fmt.Errorf("selective_memorizer: %w", err)
	}
	c.Logger().Info("memorized", "count", len(ins))
	return nil, nil
}

var (
	decisionRE = regexp.MustCompile(`(?i)\b(we decided|i decided|decided to|let's go with|lets go with|we'll use|i'll use|we will use|going with|chose|we chose|decision:)`)
	intentRE   = regexp.MustCompile(`(?i)\b(i want to|i'd like to|my goal is|our goal is|i need to|we need to|the aim is|i'm trying to|i am trying to)\b`)
	framingRE  = regexp.MustCompile(`(?i)\b(think of .{2,40} as|is basically|the key (question|point|issue) is|in other words|the real problem is|boils down to)\b`)
)

// Insight is one captured sentence.
type Insight struct {
	Type      string `json:"type"`
	Text      string `json:"text"`
	Source    string `json:"source"`
	Domain    string `json:"domain,omitempty"`
	RequestID string `json:"request_id"`
}

// Insights finds the decisions, intents and framings of a text.
func Insights(text, source string) []Insight {
	var out []Insight
	for _, s := range textfacts.Sentences(text) {
		typ := ""
		switch {
		case decisionRE.MatchString(s):
			typ = "decision"
		case intentRE.MatchString(s):
			typ = "intent"
		case framingRE.MatchString(s):
			typ = "framing"
		}
		if typ != "" && !strings.HasSuffix(s, "?") {
			out = append(out, Insight{Type: typ, Text: textfacts.Shorten(s, 300), Source: source})
		}
	}
	return out
}

// Capture is insight capture.
type Capture struct {
	Home func() (string, error)
}

// Spec declares it.
func (e Capture) Spec() sdk.Spec {
	return sdk.Spec{
		Name:        "insight_capture",
		Hooks:       []sdk.Hook{sdk.MonologueEnd(e)},
		Order:       53,
		Reads:       []sdk.KeyRef{bstKey()},
		Description: "Appends the decisions, intents and framings stated by the operator or in the answer to staging.jsonl as insight records.",
		// The monologue's operator message may be further back than the recent
		// messages reach.
		ReadsHistory: true,
	}
}

// MonologueEnd captures insights.
func (cp Capture) MonologueEnd(ctx context.Context, c *sdk.Call, req *exocortexv1.MonologueEndRequest) (*exocortexv1.MonologueEndResponse, error) {
	if cp.Home == nil {
		return nil, nil
	}
	var ins []Insight
	if m := operatorMessage(c, req.GetHistory()); m != nil {
		ins = append(ins, Insights(m.GetContent(), "operator")...)
	}
	if req.GetStopReason() == "" {
		ins = append(ins, Insights(req.GetFinalResponse(), "agent")...)
	}
	if len(ins) == 0 {
		return nil, nil
	}
	home, err := cp.Home()
	if err != nil {
		return nil, err
	}
	bs, _ := bstKey().Get(c)
	var entries []stagelog.Entry
	for _, in := range ins {
		in.Domain, in.RequestID = bs.GetCompoundSig(), c.Context().GetRequestId()
		entries = append(entries, stagelog.Entry{Kind: stagelog.KindInsight, Session: c.Context().GetSessionId(), Payload: in})
	}
	if _, err := stagelog.Append(ctx, filepath.Join(home, stagelog.StagingFile), entries, nil); err != nil {
		return nil, fmt.Errorf("insight_capture: %w", err)
	}
	return nil, nil
}

var (
	procRE  = regexp.MustCompile(`(?i)\b(how to|steps?:|step \d|run |command|install|configure|to fix|workaround|use ` + "`" + `)`)
	episRE  = regexp.MustCompile(`(?i)^asked:|\b(i|we) (ran|did|tried|found|saw|changed|fixed|wrote|deleted)\b|\b(yesterday|today|last (week|night|time))\b|\b\d{4}-\d{2}-\d{2}\b`)
	axisTag = "axis:"
)

// Axis classifies a memory.
func Axis(r *exocortexv1.MemoryRecord) string {
	switch {
	case r.GetArea() == AreaSolutions || procRE.MatchString(r.GetText()):
		return "procedural"
	case episRE.MatchString(r.GetText()):
		return "episodic"
	}
	return "semantic"
}

// Classifier is the memory classifier.
type Classifier struct{}

// MaxClassify is how many records one run tags.
const MaxClassify = 50

// Spec declares it.
func (e Classifier) Spec() sdk.Spec {
	return sdk.Spec{
		Name:        "memory_classifier",
		Hooks:       []sdk.Hook{sdk.MonologueEnd(e)},
		Order:       55,
		Reads:       []sdk.KeyRef{bstKey(), loopKey()},
		Description: "Tags the session's unclassified memories with axis (procedural, episodic, semantic), domain and loop_period (while loop_active).",
	}
}

// MonologueEnd classifies.
func (Classifier) MonologueEnd(ctx context.Context, c *sdk.Call, _ *exocortexv1.MonologueEndRequest) (*exocortexv1.MonologueEndResponse, error) {
	session := c.Context().GetSessionId()
	bs, _ := bstKey().Get(c)
	la, _ := loopKey().Get(c)
	mem := c.Memory().As("extension:memory_classifier")
	var ins []*exocortexv1.MemoryInput
	// The session's records (the service picks them in one pass over the
	// state, copying only those), of which the unclassified ones.
	errFull := errors.New("full")
	err := mem.List(ctx, &exocortexv1.MemoryListRequest{Session: session}, func(r *exocortexv1.MemoryRecord) error {
		if slices.ContainsFunc(r.GetTags(), func(t string) bool { return strings.HasPrefix(t, axisTag) }) {
			return nil
		}
		tags := append(slices.Clone(r.GetTags()), axisTag+Axis(r))
		if d := bs.GetPrimaryDomain(); d != "" {
			tags = append(tags, "domain:"+d)
		}
		if la.GetActive() && !slices.Contains(tags, "loop_period") {
			tags = append(tags, "loop_period")
		}
		imp := r.GetImportance()
		ins = append(ins, &exocortexv1.MemoryInput{Id: r.GetId(), Area: r.GetArea(), Text: r.GetText(), Key: r.GetKey(), Tags: tags,
			Metadata: r.GetMetadata(), Importance: &imp, Created: r.GetCreated(), Status: r.GetStatus()})
		if len(ins) >= MaxClassify {
			return errFull
		}
		return nil
	})
	if err != nil && !errors.Is(err, errFull) {
		return nil, fmt.Errorf("memory_classifier: %w", err)
	}
	if len(ins) == 0 {
		return nil, nil
	}
	if _, err := mem.Save(ctx, ins...); err != nil {
		return nil, fmt.Errorf("memory_classifier: %w", err)
	}
	c.Logger().Info("classified memories", "count", len(ins))
	return nil, nil
}

// Maintenance is memory maintenance.
type Maintenance struct {
	Now func() time.Time
}

// Spec declares it.
func (e Maintenance) Spec() sdk.Spec {
	return sdk.Spec{
		Name:        "memory_maintenance",
		Hooks:       []sdk.Hook{sdk.MonologueEnd(e)},
		Order:       57,
		Reads:       []sdk.KeyRef{maintKey()},
		Writes:      []sdk.KeyRef{maintKey()},
		Description: "At most daily, archives (reversibly) unused low-importance memories of main and fragments after 90 days, and unadjudicated loop-period ones after 30.",
	}
}

// Stale reports why a record should be archived, or "".
func Stale(r *exocortexv1.MemoryRecord, now time.Time) string {
	if r.GetStatus() != "active" || r.GetAccessCount() > 0 || r.GetLastAccess() != nil && !r.GetLastAccess().AsTime().IsZero() {
		return ""
	}
	age := now.Sub(r.GetUpdated().AsTime())
	if slices.Contains(r.GetTags(), "loop_period") && !slices.Contains(r.GetTags(), "adjudicated") && age > LoopAge {
		return "maintenance: written during a loop, never adjudicated nor used"
	}
	if (r.GetArea() == AreaMain || r.GetArea() == AreaFragments) && r.GetImportance() < StaleImportance && age > StaleAge {
		return "maintenance: never used, low importance, unchanged for 90 days"
	}
	return ""
}

// MonologueEnd runs maintenance when due.
func (mt Maintenance) MonologueEnd(ctx context.Context, c *sdk.Call, _ *exocortexv1.MonologueEndRequest) (*exocortexv1.MonologueEndResponse, error) {
	now := time.Now()
	if mt.Now != nil {
		now = mt.Now()
	}
	ms, _ := maintKey().Get(c)
	if ms == nil {
		ms = &exocortexv1.MaintenanceState{}
	}
	if last, err := time.Parse(time.RFC3339, ms.GetLastRunUtc()); err == nil && now.Sub(last) < MaintenanceGap {
		return nil, nil
	}
	archived := 0
	mem := c.Memory().As("extension:memory_maintenance")
	// The active records outside the library, by id, of which the stale ones
	// (at most MaxArchive).
	var stale []*exocortexv1.MemoryRecord
	errFull := errors.New("full")
	err := mem.List(ctx, &exocortexv1.MemoryListRequest{}, func(r *exocortexv1.MemoryRecord) error {
		if Stale(r, now) == "" {
			return nil
		}
		stale = append(stale, r)
		if len(stale) >= MaxArchive {
			return errFull
		}
		return nil
	})
	if err != nil && !errors.Is(err, errFull) {
		return nil, fmt.Errorf("memory_maintenance: %w", err)
	}
	for _, r := range stale {
		if err := mem.Archive(ctx, r.GetId(), Stale(r, now)); err != nil {
			return nil, fmt.Errorf("memory_maintenance: %w", err)
		}
		archived++
	}
	ms.LastRunUtc = now.UTC().Format(time.RFC3339)
	ms.Runs++
	ms.ArchivedTotal += int32(archived)
	maintKey().Set(c, ms)
	if archived > 0 {
		c.Logger().Info("archived stale memories", "count", archived)
	}
	return nil, nil
}
