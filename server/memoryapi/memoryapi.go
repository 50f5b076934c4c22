// Package memoryapi is the memory of one home over REST, under /api/v1/: the
// surface `exocortex serve` mounts for clients that are not the agent (a
// dashboard, another agent, a script). It holds no store: every handler is a
// call of the home's memory service (memory/service), so what it answers is
// what `exocortex memory` and the agent's tools see, and its writes land in
// the one journal.
//
// Reads (search, compile, get, why, state) need the agent role; writes (save,
// archive, restore) the admin role. A write's provenance names the API key
// that made it ("api:<key name>"), never the key.
//
// Every error is route.Error's shape and names the field at fault: a q that is
// missing, a k that is not a number, an id the store does not hold.
//
//	curl -H "X-API-KEY: $KEY" 'http://127.0.0.1:8765/api/v1/memory/search?q=lighthouse&k=5&area=main'
package memoryapi

import (
	"net/http"
	"strings"

	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/memory/service"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/server/route"
)

// MaxK bounds a search's k.
const MaxK = 1000

// API serves the memory routes from a memory service client.
type API struct {
	mem exocortexv1.MemoryServiceClient
}

// New returns the memory and state routes, served by mem.
func New(mem exocortexv1.MemoryServiceClient) []route.Route {
	a := &API{mem: mem}
	h := func(f http.HandlerFunc) http.Handler { return f }
	return []route.Route{
		{Method: "GET", Pattern: "/api/v1/memory/search", Role: route.Agent, Summary: "Search memory, with each hit's why", Handler: h(a.search)},
		{Method: "POST", Pattern: "/api/v1/memory/compile", Role: route.Agent, Summary: "Compile the memory block for a query within a token budget", Handler: h(a.compile)},
		{Method: "GET", Pattern: "/api/v1/memory/{id}", Role: route.Agent, Summary: "Get one memory record", Handler: h(a.get)},
		{Method: "POST", Pattern: "/api/v1/memory", Role: route.Admin, Summary: "Save a memory record (new, or by id or area and key)", Handler: h(a.save)},
		{Method: "POST", Pattern: "/api/v1/memory/{id}/archive", Role: route.Admin, Summary: "Archive a record (out of recall, kept)", Handler: h(a.archive)},
		{Method: "POST", Pattern: "/api/v1/memory/{id}/restore", Role: route.Admin, Summary: "Restore an archived record", Handler: h(a.restore)},
		{Method: "GET", Pattern: "/api/v1/memory/why/{id}", Role: route.Agent, Summary: "The journal events that made a record what it is", Handler: h(a.why)},
		{Method: "GET", Pattern: "/api/v1/state", Role: route.Agent, Summary: "The state hash and counts, at constant cost", Handler: h(a.state)},
	}
}

// Hit is one search hit: the record and why it matched.
type Hit struct {
	Record *memory.Record `json:"record"`
	// Why says in words why the hit matched.
	Why string `json:"why"`
	// Score is the hit's final score; Match its score against the best hit (0 to 1).
	Score float64 `json:"score"`
	Match float64 `json:"match"`
	// BM25Rank and VectorRank are 1-based ranks in each retriever (0: absent).
	BM25Rank   int     `json:"bm25_rank"`
	VectorRank int     `json:"vector_rank"`
	Similarity float64 `json:"similarity,omitempty"`
	Tokens     int     `json:"tokens"`
}

// SearchReply is the answer of GET /api/v1/memory/search.
type SearchReply struct {
	Query string `json:"query"`
	// Mode is hybrid, bm25 or vector; Notice says what limited the search.
	Mode   string `json:"mode"`
	Notice string `json:"notice,omitempty"`
	Hits   []Hit  `json:"hits"`
}

func hits(ps []*exocortexv1.MemoryHit) []Hit {
	out := make([]Hit, len(ps))
	for i, p := range ps {
		out[i] = Hit{Record: service.Record(p.GetRecord()), Why: p.GetWhy(), Score: p.GetScore(), Match: p.GetMatch(),
			BM25Rank: int(p.GetBm25Rank()), VectorRank: int(p.GetVectorRank()), Similarity: p.GetSimilarity(), Tokens: int(p.GetTokens())}
	}
	return out
}

func (a *API) search(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	query := strings.TrimSpace(q.Get("q"))
	if query == "" {
		fieldError(w, "q", "q is missing: give the words to search for, as ?q=...")
		return
	}
	k, ok := intParam(w, q, "k", 10, 1, MaxK)
	if !ok {
		return
	}
	opts := &exocortexv1.MemorySearchOptions{Limit: int32(k), Filter: &exocortexv1.MemoryFilter{Areas: list(q, "area"), Tags: list(q, "tags")}}
	res, err := a.mem.Search(r.Context(), &exocortexv1.MemorySearchRequest{Query: query, Options: opts})
	if err != nil {
		serviceError(w, err, "q")
		return
	}
	route.JSON(w, http.StatusOK, SearchReply{Query: res.GetQuery(), Mode: res.GetMode(), Notice: res.GetNotice(), Hits: hits(res.GetHits())})
}

// CompileRequest is the body of POST /api/v1/memory/compile.
type CompileRequest struct {
	Query string `json:"query"`
	// TokenBudget bounds the block (required, at least 1).
	TokenBudget int `json:"token_budget"`
	// Threshold drops hits whose match score is below it (0: none).
	Threshold float64 `json:"threshold,omitempty"`
	// K is how many hits are considered (default 10).
	K    int      `json:"k,omitempty"`
	Area []string `json:"area,omitempty"`
	Tags []string `json:"tags,omitempty"`
}

// CompileReply is the block the agent would receive, and the hits in it.
type CompileReply struct {
	Block   string `json:"block"`
	Tokens  int    `json:"tokens"`
	Hits    []Hit  `json:"hits"`
	Dropped int    `json:"dropped"`
	Notice  string `json:"notice,omitempty"`
}

func (a *API) compile(w http.ResponseWriter, r *http.Request) {
	var req CompileRequest
	if !decodeBody(w, r, &req) {
		return
	}
	switch {
	case strings.TrimSpace(req.Query) == "":
		fieldError(w, "query", "query is missing: give the words to compile memory for")
		return
	case req.TokenBudget < 1:
		fieldError(w, "token_budget", "token_budget must be at least 1 (the block's size in tokens)")
		return
	case req.K < 0 || req.K > MaxK:
		fieldError(w, "k", "k must be between 1 and 1000")
		return
	case req.Threshold < 0 || req.Threshold > 1:
		fieldError(w, "threshold", "threshold must be between 0 and 1")
		return
	}
	opts := &exocortexv1.MemorySearchOptions{Limit: int32(req.K), Filter: &exocortexv1.MemoryFilter{Areas: req.Area, Tags: req.Tags}}
	res, err := a.mem.Compile(r.Context(), &exocortexv1.MemoryCompileRequest{Query: req.Query, TokenBudget: int32(req.TokenBudget),
		Threshold: req.Threshold, Options: opts})
	if err != nil {
		serviceError(w, err, "query")
		return
	}
	route.JSON(w, http.StatusOK, CompileReply{Block: res.GetBlock(), Tokens: int(res.GetTokens()), Hits: hits(res.GetHits()),
		Dropped: int(res.GetDropped()), Notice: res.GetNotice()})
}

func (a *API) get(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	res, err := a.mem.Get(r.Context(), &exocortexv1.MemoryGetRequest{Id: id})
	if err != nil {
		serviceError(w, err, "id")
		return
	}
	if !res.GetFound() {
		notFound(w, id)
		return
	}
	route.JSON(w, http.StatusOK, service.Record(res.GetRecord()))
}

// SaveRequest is the body of POST /api/v1/memory: a record to save. Without
// id, and without a key its area holds, a new record is made.
type SaveRequest struct {
	ID         string         `json:"id,omitempty"`
	Area       string         `json:"area,omitempty"`
	Text       string         `json:"text"`
	Key        string         `json:"key,omitempty"`
	Tags       []string       `json:"tags,omitempty"`
	Metadata   map[string]any `json:"metadata,omitempty"`
	Importance *float64       `json:"importance,omitempty"`
}

// SaveReply is the record as stored and the journal sequence of the write.
type SaveReply struct {
	Record *memory.Record `json:"record"`
	Seq    uint64         `json:"seq"`
}

func (a *API) save(w http.ResponseWriter, r *http.Request) {
	var req SaveRequest
	if !decodeBody(w, r, &req) {
		return
	}
	if strings.TrimSpace(req.Text) == "" {
		fieldError(w, "text", "text is missing: a record needs its text")
		return
	}
	if req.Importance != nil && (*req.Importance < 0 || *req.Importance > 1) {
		fieldError(w, "importance", "importance must be between 0 and 1")
		return
	}
	in := memory.Input{ID: req.ID, Area: req.Area, Text: req.Text, Key: req.Key, Tags: req.Tags, Metadata: req.Metadata, Importance: req.Importance}
	res, err := a.mem.Save(r.Context(), &exocortexv1.MemorySaveRequest{Records: []*exocortexv1.MemoryInput{service.InputProto(in)}, Source: source(r)})
	if err != nil {
		serviceError(w, err, "text")
		return
	}
	status := http.StatusCreated
	if req.ID != "" {
		status = http.StatusOK
	}
	route.JSON(w, status, SaveReply{Record: service.Record(res.GetRecords()[0]), Seq: res.GetSeq()})
}

// ArchiveRequest is the optional body of POST /api/v1/memory/{id}/archive.
type ArchiveRequest struct {
	Reason       string `json:"reason,omitempty"`
	SupersededBy string `json:"superseded_by,omitempty"`
}

// RestoreRequest is the optional body of POST /api/v1/memory/{id}/restore.
type RestoreRequest struct {
	Reason string `json:"reason,omitempty"`
}

func (a *API) archive(w http.ResponseWriter, r *http.Request) {
	var req ArchiveRequest
	if !decodeOptionalBody(w, r, &req) {
		return
	}
	id := r.PathValue("id")
	_, err := a.mem.Archive(r.Context(), &exocortexv1.MemoryArchiveRequest{Id: id, Reason: req.Reason, SupersededBy: req.SupersededBy, Source: source(r)})
	a.answerRecord(w, r, id, err)
}

func (a *API) restore(w http.ResponseWriter, r *http.Request) {
	var req RestoreRequest
	if !decodeOptionalBody(w, r, &req) {
		return
	}
	id := r.PathValue("id")
	_, err := a.mem.Restore(r.Context(), &exocortexv1.MemoryRestoreRequest{Id: id, Reason: req.Reason, Source: source(r)})
	a.answerRecord(w, r, id, err)
}

// answerRecord answers a write of record id with the record as it now is.
func (a *API) answerRecord(w http.ResponseWriter, r *http.Request, id string, err error) {
	if err != nil {
		serviceError(w, err, "id")
		return
	}
	a.get(w, r)
}

// WhyReply is the history of a record: the journal events that touched it.
type WhyReply struct {
	ID      string     `json:"id"`
	Entries []WhyEntry `json:"entries"`
	// Record is the record as it is now (absent once deleted).
	Record *memory.Record `json:"record,omitempty"`
}

// WhyEntry is one journal event and what it did, in words.
type WhyEntry struct {
	Seq     uint64 `json:"seq"`
	TS      string `json:"ts"`
	Kind    string `json:"kind"`
	Session string `json:"session,omitempty"`
	Summary string `json:"summary"`
}

func (a *API) why(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	res, err := a.mem.History(r.Context(), &exocortexv1.MemoryHistoryRequest{Id: id})
	if err != nil {
		serviceError(w, err, "id")
		return
	}
	if len(res.GetEntries()) == 0 && res.GetRecord() == nil {
		notFound(w, id)
		return
	}
	out := WhyReply{ID: id, Entries: make([]WhyEntry, 0, len(res.GetEntries()))}
	for _, e := range res.GetEntries() {
		ev := e.GetEvent()
		out.Entries = append(out.Entries, WhyEntry{Seq: ev.GetSeq(), TS: ev.GetTs().AsTime().UTC().Format("2006-01-02T15:04:05.000Z07:00"),
			Kind: ev.GetKind(), Session: ev.GetSession(), Summary: e.GetSummary()})
	}
	if res.GetRecord() != nil {
		out.Record = service.Record(res.GetRecord())
	}
	route.JSON(w, http.StatusOK, out)
}

// StateReply is the state of the store, for a client to tell whether its copy
// is current: compare StateHash, and fetch the deltas after Seq if not.
type StateReply struct {
	// NS is the namespace (memory area) asked about, if any.
	NS string `json:"ns,omitempty"`
	// Records counts the namespace's records (the whole store's without ns),
	// active and archived.
	Records int `json:"records"`
	// StateHash is the namespace's state hash (the whole store's without
	// ns): a set hash over its records that the writes keep current, so
	// reading it costs the same at 100k records as at 10.
	StateHash string `json:"state_hash"`
	// StoreHash is the whole store's, the sum of every area's.
	StoreHash string `json:"store_hash"`
	// Seq is the journal's last sequence number.
	Seq    uint64         `json:"seq"`
	ByArea map[string]int `json:"by_area"`
}

func (a *API) state(w http.ResponseWriter, r *http.Request) {
	st, err := a.mem.Stats(r.Context(), &exocortexv1.MemoryStatsRequest{})
	if err != nil {
		serviceError(w, err, "")
		return
	}
	out := StateReply{NS: r.URL.Query().Get("ns"), Records: int(st.GetRecords()), StateHash: st.GetStateHash(),
		StoreHash: st.GetStateHash(), Seq: st.GetJournalSeq(), ByArea: map[string]int{}}
	for k, v := range st.GetByArea() {
		out.ByArea[k] = int(v)
	}
	if out.NS != "" {
		n, ok := out.ByArea[out.NS]
		h, hashed := st.GetAreaHashes()[out.NS]
		if !ok || !hashed {
			route.Error(w, http.StatusNotFound, route.Problem{Code: route.CodeNotFound, Field: "ns",
				Message: "ns " + quote(out.NS) + " is no memory area of this store (its areas: " + areas(out.ByArea) + ")"})
			return
		}
		out.Records, out.StateHash = n, h
	}
	route.JSON(w, http.StatusOK, out)
}
