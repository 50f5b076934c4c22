// Package inspect is the dashboard's window on what the agent did, served by
// `exocortex serve` under /api/v1: what the model saw, the live wiring of a
// turn, and the plugins' health. It invents no record of its own: a served
// session is recorded as the replay package records it (sessions/NAME.replay,
// the loop's own events with each request in full), and the plugins' health
// is the host's ([host.Host.Status], what `exocortex plugins status` prints).
//
// What the model saw (GET /api/v1/saw/{session}?turn=N) is, for a turn of a
// session (the last by default), each iteration's request as it went to the
// model: the base system prompt, every prompt block labelled with the
// extension, plugin and hook that added it, every message with the part of
// the prompt it belongs to (system, summary, blocks, history), the model's
// reply, and the memories the recall block brought, each with why it was
// chosen (the "why:" lines the recall extension writes under each memory).
//
// The wiring of a turn (GET /api/v1/wiring/{session}?turn=N) is what the
// terminal's /wiring shows, as timeline data: one row per hook firing, in
// order, with its start and end as offsets from the turn's start and its
// extensions' calls in the order they were taken (each call's end is when
// its event was recorded, its start that less its duration; the calls of one
// batch share a round trip, whose cost is in the first one's duration); the
// state keys each extension read and wrote; the signals fired; the failures;
// the plugins of the turn that are quarantined or crashed since; and each
// request's context budget split as the budget code sized it (see [Split]).
//
// The plugins (GET /api/v1/plugins, GET /api/v1/plugins/{name}) are the
// host's status reports: state, crashes, restarts, last error and stderr
// tail, every extension with its hook and order. POST
// /api/v1/plugins/{name}/reload (admin) starts the plugin again from its
// file with the checks a change on disk gets, as `/plugins reload NAME`
// does; the new version is swapped in at once when no session is mid-step,
// else at the next step.
package inspect
