// Package sessions runs the agent for `exocortex serve`: many named sessions
// at once in one process, each its own [loop.Agent] over its own
// [session.Session] (the very files the terminal lists and resumes, under
// $EXOCORTEX_HOME/sessions, or the shared bucket of Options.Store when the
// memory journal is on NATS), so two sessions never see each other's history,
// session state, approvals or files. On a shared store several managers (serve
// replicas on several hosts) serve one session: each turn first reads what
// the others appended (fresh.go), and two turns at once on two replicas end
// with the second refused (session.ErrConflict, 409), never a lost turn.
//
// A [Manager] opens a session on its first use and keeps it until it is idle
// past its lifetime, reset, terminated or the manager closes:
//
//	m := sessions.NewManager(sessions.Options{Dir: dir, NewAgent: build})
//	res, err := m.Run(ctx, sessions.Turn{Session: "ops-1", Message: "hello"})
//
// A session's monologues run one after another: a second turn waits for the
// first (or for its own context to end). Each session keeps a log of what
// its agent did, in Agent Zero's log shape ([Item]), which its API reads
// back with api_log_get, and a directory of files ([Live.FilesDir]) for the
// attachments sent with a message, the only files the API hands back.
//
// Tool calls an extension holds for the operator wait in an [Approvals]
// registry until an admin answers (POST /api/v1/approvals/{id}) or the
// deadline passes; then the call is refused and the model is told why.
package sessions
