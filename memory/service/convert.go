package service

import (
	"encoding/json"
	"time"

	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/exocortex/exocortex/memory"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/staging"
)

// The conversions between the store's types and the protocol's. Both sides of
// the service use them: the server to answer, Record/Hit/... to read an answer
// back into the store's types (the CLI prints those).

func ts(t time.Time) *timestamppb.Timestamp {
	if t.IsZero() {
		return nil
	}
	return timestamppb.New(t)
}

func fromTS(t *timestamppb.Timestamp) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.AsTime().UTC()
}

// metaStruct encodes metadata (which came from JSON) as a Struct; a value that
// does not fit goes through JSON first.
func metaStruct(m map[string]any) *structpb.Struct {
	if len(m) == 0 {
		return nil
	}
	if s, err := structpb.NewStruct(m); err == nil {
		return s
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil
	}
	var plain map[string]any
	if json.Unmarshal(b, &plain) != nil {
		return nil
	}
	s, _ := structpb.NewStruct(plain)
	return s
}

func structMeta(s *structpb.Struct) map[string]any {
	if s == nil || len(s.GetFields()) == 0 {
		return nil
	}
	return s.AsMap()
}

// RecordProto is a record in the protocol.
func RecordProto(r *memory.Record) *exocortexv1.MemoryRecord {
	if r == nil {
		return nil
	}
	return &exocortexv1.MemoryRecord{
		Id: r.ID, Area: r.Area, Text: r.Text, Key: r.Key, Tags: r.Tags, Metadata: metaStruct(r.Metadata),
		Created: ts(r.Created), Updated: ts(r.Updated), Importance: r.Importance, AccessCount: r.AccessCount,
		LastAccess: ts(r.LastAccess), Status: string(r.Status), SupersededBy: r.SupersededBy,
		Provenance: &exocortexv1.MemoryProvenance{Session: r.Provenance.Session, Message: r.Provenance.Message,
			Source: r.Provenance.Source, Seq: r.Provenance.Seq, UpdatedSeq: r.Provenance.UpdatedSeq},
	}
}

// Record is a protocol record as the store's type.
func Record(p *exocortexv1.MemoryRecord) *memory.Record {
	if p == nil {
		return nil
	}
	pv := p.GetProvenance()
	return &memory.Record{
		ID: p.GetId(), Area: p.GetArea(), Text: p.GetText(), Key: p.GetKey(), Tags: p.GetTags(), Metadata: structMeta(p.GetMetadata()),
		Created: fromTS(p.GetCreated()), Updated: fromTS(p.GetUpdated()), Importance: p.GetImportance(), AccessCount: p.GetAccessCount(),
		LastAccess: fromTS(p.GetLastAccess()), Status: memory.Status(p.GetStatus()), SupersededBy: p.GetSupersededBy(),
		Provenance: memory.Provenance{Session: pv.GetSession(), Message: pv.GetMessage(), Source: pv.GetSource(),
			Seq: pv.GetSeq(), UpdatedSeq: pv.GetUpdatedSeq()},
	}
}

// Records converts a list of protocol records.
func Records(ps []*exocortexv1.MemoryRecord) []*memory.Record {
	out := make([]*memory.Record, len(ps))
	for i, p := range ps {
		out[i] = Record(p)
	}
	return out
}

// SourceProto is a provenance in the protocol.
func SourceProto(s memory.Source) *exocortexv1.MemorySource {
	return &exocortexv1.MemorySource{Session: s.Session, Message: s.Message, Source: s.Source}
}

func source(p *exocortexv1.MemorySource) memory.Source {
	return memory.Source{Session: p.GetSession(), Message: p.GetMessage(), Source: p.GetSource()}
}

// InputProto is a record to save in the protocol.
func InputProto(in memory.Input) *exocortexv1.MemoryInput {
	p := &exocortexv1.MemoryInput{Id: in.ID, Area: in.Area, Text: in.Text, Key: in.Key, Tags: in.Tags,
		Metadata: metaStruct(in.Metadata), Importance: in.Importance, Status: string(in.Status)}
	if in.Created != nil {
		p.Created = timestamppb.New(*in.Created)
	}
	return p
}

func input(p *exocortexv1.MemoryInput) memory.Input {
	in := memory.Input{ID: p.GetId(), Area: p.GetArea(), Text: p.GetText(), Key: p.GetKey(), Tags: p.GetTags(),
		Metadata: structMeta(p.GetMetadata()), Status: memory.Status(p.GetStatus())}
	if p.Importance != nil {
		v := p.GetImportance()
		in.Importance = &v
	}
	if p.GetCreated() != nil {
		t := fromTS(p.GetCreated())
		in.Created = &t
	}
	return in
}

// FilterProto is a filter in the protocol.
func FilterProto(f memory.Filter) *exocortexv1.MemoryFilter {
	p := &exocortexv1.MemoryFilter{Areas: f.Areas, Tags: f.Tags, Key: f.Key, From: ts(f.From), To: ts(f.To)}
	for _, s := range f.Statuses {
		p.Statuses = append(p.Statuses, string(s))
	}
	return p
}

func filter(p *exocortexv1.MemoryFilter) memory.Filter {
	f := memory.Filter{Areas: p.GetAreas(), Tags: p.GetTags(), Key: p.GetKey(), From: fromTS(p.GetFrom()), To: fromTS(p.GetTo())}
	for _, s := range p.GetStatuses() {
		f.Statuses = append(f.Statuses, memory.Status(s))
	}
	return f
}

// OptionsProto is search options in the protocol.
func OptionsProto(o memory.SearchOptions) *exocortexv1.MemorySearchOptions {
	return &exocortexv1.MemorySearchOptions{
		Limit: int32(o.Limit), Filter: FilterProto(o.Filter), Mode: string(o.Mode), Fusion: string(o.Fusion), RrfK: o.RRFK,
		Bm25Weight: o.BM25Weight, VectorWeight: o.VectorWeight, Context: o.Context, ContextWindow: int32(o.ContextWindow),
		ContextDecay: o.ContextDecay, ContextReply: o.ContextReply, SpeakerBoost: o.SpeakerBoost, SpeakerPrior: o.SpeakerPrior,
		SpeakerLead: o.SpeakerLead, QuestionPenalty: o.QuestionPenalty, Feedback: int32(o.Feedback), FeedbackTerms: int32(o.FeedbackTerms),
		FeedbackBoost: o.FeedbackBoost, Expand: int32(o.Expand), ExpandMinSim: o.ExpandMinSim, ExpandBoost: o.ExpandBoost,
		SoftMatch: o.SoftMatch, SoftMatchFloor: o.SoftMatchFloor, MaxDf: o.MaxDF, Candidates: int32(o.Candidates),
		RecencyHalfLifeMs: o.RecencyHalfLife.Milliseconds(), RecencyWeight: o.RecencyWeight, MmrLambda: o.MMRLambda,
		TokenBudget: int32(o.TokenBudget), RecordAccess: o.RecordAccess, Source: SourceProto(o.Source), Now: ts(o.Now),
	}
}

// Options is protocol search options as the store's type.
func Options(p *exocortexv1.MemorySearchOptions) memory.SearchOptions { return options(p) }

func options(p *exocortexv1.MemorySearchOptions) memory.SearchOptions {
	return memory.SearchOptions{
		Limit: int(p.GetLimit()), Filter: filter(p.GetFilter()), Mode: memory.Mode(p.GetMode()), Fusion: memory.Fusion(p.GetFusion()),
		RRFK: p.GetRrfK(), BM25Weight: p.GetBm25Weight(), VectorWeight: p.GetVectorWeight(), Context: p.GetContext(),
		ContextWindow: int(p.GetContextWindow()), ContextDecay: p.GetContextDecay(), ContextReply: p.GetContextReply(),
		SpeakerBoost: p.GetSpeakerBoost(), SpeakerPrior: p.GetSpeakerPrior(), SpeakerLead: p.GetSpeakerLead(),
		QuestionPenalty: p.GetQuestionPenalty(), Feedback: int(p.GetFeedback()), FeedbackTerms: int(p.GetFeedbackTerms()),
		FeedbackBoost: p.GetFeedbackBoost(), Expand: int(p.GetExpand()), ExpandMinSim: p.GetExpandMinSim(), ExpandBoost: p.GetExpandBoost(),
		SoftMatch: p.GetSoftMatch(), SoftMatchFloor: p.GetSoftMatchFloor(), MaxDF: p.GetMaxDf(), Candidates: int(p.GetCandidates()),
		RecencyHalfLife: time.Duration(p.GetRecencyHalfLifeMs()) * time.Millisecond, RecencyWeight: p.GetRecencyWeight(),
		MMRLambda: p.GetMmrLambda(), TokenBudget: int(p.GetTokenBudget()), RecordAccess: p.GetRecordAccess(),
		Source: source(p.GetSource()), Now: fromTS(p.GetNow()),
	}
}

// hitsProto converts a result's hits, with each one's why and match score.
func hitsProto(res memory.Result) []*exocortexv1.MemoryHit {
	best := 0.0
	for _, h := range res.Hits {
		best = max(best, h.BM25Score)
	}
	vectors := res.Mode != memory.ModeBM25
	out := make([]*exocortexv1.MemoryHit, len(res.Hits))
	for i, h := range res.Hits {
		out[i] = &exocortexv1.MemoryHit{
			Record: RecordProto(h.Record), Bm25Rank: int32(h.BM25Rank), Bm25Score: h.BM25Score, VectorRank: int32(h.VectorRank),
			Similarity: h.Similarity, Fused: h.Fused, Score: h.Score, Context: h.Context, Meaning: h.Meaning, Speaker: h.Speaker,
			Asks: h.Asks, Tokens: int32(h.Tokens), Why: h.Why(), Match: memory.MatchScore(h, best, vectors),
		}
	}
	return out
}

// Hit is a protocol hit as the store's type.
func Hit(p *exocortexv1.MemoryHit) memory.Hit {
	return memory.Hit{Record: Record(p.GetRecord()), BM25Rank: int(p.GetBm25Rank()), BM25Score: p.GetBm25Score(),
		VectorRank: int(p.GetVectorRank()), Similarity: p.GetSimilarity(), Fused: p.GetFused(), Score: p.GetScore(),
		Context: p.GetContext(), Meaning: p.GetMeaning(), Speaker: p.GetSpeaker(), Asks: p.GetAsks(), Tokens: int(p.GetTokens())}
}

// Result is a protocol search response as the store's type.
func Result(p *exocortexv1.MemorySearchResponse) memory.Result {
	res := memory.Result{Query: p.GetQuery(), Mode: memory.Mode(p.GetMode()), Notice: p.GetNotice(), Block: p.GetBlock(),
		Tokens: int(p.GetTokens()), Dropped: int(p.GetDropped()), Hits: make([]memory.Hit, len(p.GetHits()))}
	for i, h := range p.GetHits() {
		res.Hits[i] = Hit(h)
	}
	return res
}

func eventProto(r staging.Record) *exocortexv1.MemoryJournalEvent {
	return &exocortexv1.MemoryJournalEvent{Seq: r.Seq, Ts: ts(r.TS), Kind: r.Kind, Session: r.Session, Payload: r.Payload}
}

// HistoryEntry is a protocol history entry as the store's type.
func HistoryEntry(p *exocortexv1.MemoryHistoryEntry) memory.HistoryEntry {
	e := p.GetEvent()
	return memory.HistoryEntry{Seq: e.GetSeq(), TS: fromTS(e.GetTs()), Kind: e.GetKind(), Session: e.GetSession(), Payload: e.GetPayload()}
}

func statsProto(st memory.Stats) *exocortexv1.MemoryStatsResponse {
	return &exocortexv1.MemoryStatsResponse{
		Dir: st.Dir, Records: int32(st.Records), ByArea: counts(st.ByArea), ByStatus: counts(st.ByStatus), JournalSeq: st.JournalSeq,
		JournalBytes: st.JournalBytes, SnapshotSeq: st.SnapshotSeq, FulltextSeq: st.FulltextSeq, FulltextDocs: st.FulltextDocs,
		Vectors: st.Vectors, VectorModel: st.VectorModel, VectorSeq: st.VectorSeq, VectorCount: int32(st.VectorCount),
		UnknownEvents: counts(st.UnknownEvents), SkippedEvents: int32(st.SkippedEvents), StateHash: st.StateHash,
		Notices: st.Notices, VectorsLagging: st.VectorsLagging, Embedder: st.Embedder, AreaHashes: st.AreaHashes,
	}
}

// Stats is a protocol stats response as the store's type.
func Stats(p *exocortexv1.MemoryStatsResponse) memory.Stats {
	return memory.Stats{
		Dir: p.GetDir(), Records: int(p.GetRecords()), ByArea: uncounts(p.GetByArea()), ByStatus: uncounts(p.GetByStatus()),
		JournalSeq: p.GetJournalSeq(), JournalBytes: p.GetJournalBytes(), SnapshotSeq: p.GetSnapshotSeq(), FulltextSeq: p.GetFulltextSeq(),
		FulltextDocs: p.GetFulltextDocs(), Vectors: p.GetVectors(), VectorModel: p.GetVectorModel(), VectorSeq: p.GetVectorSeq(),
		VectorCount: int(p.GetVectorCount()), UnknownEvents: uncounts(p.GetUnknownEvents()), SkippedEvents: int(p.GetSkippedEvents()),
		StateHash: p.GetStateHash(), Notices: p.GetNotices(), VectorsLagging: p.GetVectorsLagging(), Embedder: p.GetEmbedder(),
		AreaHashes: p.GetAreaHashes(),
	}
}

func counts(m map[string]int) map[string]int32 {
	out := make(map[string]int32, len(m))
	for k, v := range m {
		out[k] = int32(v)
	}
	return out
}

func uncounts(m map[string]int32) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = int(v)
	}
	return out
}
