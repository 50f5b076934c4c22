// Package service is the memory store of one home served to every process on
// it: one owner, any number of clients, one journal.
//
// memory.Open takes the journal's lock, so only one process can hold a store.
// Connect turns that into a service: the first process that needs memory opens
// the store (it becomes the owner) and serves exocortex.v1.MemoryService on
// the unix socket $EXOCORTEX_HOME/run/memory.sock (mode 0600, in a 0700
// directory); a process that finds the lock held is a client of that socket.
// Every call of a Client goes through the socket, the owner's own included,
// so all of them see the same store and every write lands in the one journal
// in the order the owner took them; the owner's own reads (Search, Compile,
// Get) alone are answered in its process by the same server code, without
// the socket's round trip (local.go).
//
// When the owner exits (Close) or dies (kill -9: the kernel drops its flock),
// each client's connection fails; the clients then try the lock every 100 ms,
// one wins, removes the dead owner's socket file, opens the store and serves
// it, and the others connect to it. Calls wait for an owner (gRPC's
// WaitForReady, bounded by the call's context). A call under way when the
// owner died is sent again only when repeating it changes nothing more:
// reads, Update, Archive, and Save, whose new records the client names before
// the first attempt (memory.NewID), so a retried save updates the record the
// dead owner may already have journaled instead of adding it twice. Other
// writes (Append, Delete, Merge, ...) fail with UNAVAILABLE and the caller
// decides. A write is acknowledged only once the owner has it in the journal,
// so an acknowledged write survives the owner's death.
//
// With no owner running, a one-shot command (exocortex memory search) becomes
// a short-lived owner: it opens the store as before and serves it while it
// runs, so that a session started meanwhile is its client and takes the store
// over when the command ends.
package service
