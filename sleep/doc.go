// Package sleep is the memory's sleep consolidation: a batch run, between
// sessions, that tidies the long-term memory (package memory) the way sleep
// tidies ours — `exocortex sleep`.
//
// # Phases
//
// A run goes through six phases, in order (each file phase_*.go explains its
// rules):
//
//	0 ingest       staging.jsonl entries since the last run become memories
//	1 dedup        near-duplicates merge into one canonical record
//	2 consolidate  clusters of related records gain a summary record
//	3 decay        weak records (importance, age, use) are archived
//	4 loop         memories written during a loop are corroborated or quarantined
//	5 ontology     entity names are resolved; relationships.jsonl follows
//
// Nothing is ever deleted: a record leaves recall by being archived, with a
// reason, and `exocortex memory restore ID` brings it back. Every change is a
// memory event in the store's journal, so `exocortex memory why ID` explains
// any merge, summary or archive.
//
// # Deterministic, resumable, idempotent
//
// A run's "now" is fixed when it starts and stamps every event it writes.
// Records are read in id order, and every decision is a function of the
// store's state, the run's time and its parameters: the neighbours come from a
// vector index the run builds for itself in a fixed order (vectors.go), the
// lexical checks from fixed word lists (lexicon.go, text.go), new records get
// ids derived from their content.
//
// Each phase first journals its plan — its summary and every event it will
// write — and then writes the events in batches (journal.go). A run killed at
// any point is resumed by the next: it finds the unfinished run in the journal,
// takes its time and parameters, finishes the plan in progress after the last
// event that reached the journal, and plans the remaining phases from the state
// they would have been planned from. The end state (memory.Store.Hash) is the
// one an uninterrupted run reaches. A run right after a run finds nothing to do
// and writes nothing: merging repeats until no group is left, clusters and
// summaries are recognised, decay measures age in whole days.
//
// A dry run (Config.DryRun) copies the store to a scratch directory, runs
// there and reports the plan; the store's files are only read.
//
// # Where it runs
//
// Only one process opens a store. While a session's memory-tools plugin holds
// it, Run returns a *BusyError (errors.Is ErrStoreBusy) naming the holder;
// Config.Wait waits for it. The session itself never runs a consolidation: its
// sleep trigger (extensions/sleep) writes a request file, and `exocortex sleep
// --if-requested` — run by the operator or a timer — takes it (request.go).
//
// docs/sleep.md lists every rule and threshold; docs/perf/sleep.md the speed.
package sleep
