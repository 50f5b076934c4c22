// Package staging is the append-only JSONL log behind staging.jsonl (the inbox that
// sessions and plugins write notes and artifacts to) and behind the memory store's
// journal.
//
// Every line is one Record:
//
//	{"v":1,"seq":42,"ts":"2026-11-21T12:00:00.123456789Z","kind":"note","session":"s1","payload":{...}}
//
// The rules that make the file trustworthy after a crash:
//
//   - One writer. Open takes an exclusive lock on <path>.lock; a second writer gets a
//     *LockedError naming the process that holds it, never interleaved lines.
//   - One write per append. A record (or a batch) is encoded in full and handed to a
//     single write(2) on an O_APPEND descriptor. If the write fails part-way (a full
//     disk), the file is truncated back to the last good offset, so no partial line
//     is left behind, and the error names the file.
//   - Durability is a policy (Options.Sync): fsync after every append, on an
//     interval, or leave it to the OS.
//   - Recovery on open. A last line without its newline was torn by a crash: it is
//     cut off and reported. A malformed line in the middle is moved to
//     <path>.quarantine with its line number and the reason, never dropped silently.
//     Both are reported by (*Log).Recovery. Sequence numbers must rise: a line
//     whose seq is wrong (jumped ahead, repeated, lower) is judged against its
//     neighbours and quarantined alone, so the records after it stay and new
//     appends continue from the last good seq. Quarantined reads the file back.
//   - Readers stream from a sequence number: Read and Scan call fn for every record
//     whose seq is greater than since, so a consumer keeps its checkpoint as "the
//     last seq I applied". Scan needs no lock and can follow a log another process
//     is writing; it skips (and returns) lines it cannot parse.
package staging

// InboxFile is the name of the inbox log in the Exocortex home directory
// ($EXOCORTEX_HOME/staging.jsonl): sessions and plugins append notes and artifacts
// to it; session start and the sleep consolidation read it with Scan.
const InboxFile = "staging.jsonl"
