package main

import (
	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/replay"
)

// record makes an agent with a session record it for `exocortex replay`:
// its events (each request, each tool's result) go to the recording beside
// the session file (replay.Recorder), after the loop's secret masking. One
// recorder per session file for the app's life: a resumed session goes on
// appending to its recording.
func (a *app) record(opts *loop.Options) error {
	if opts.Session == nil {
		return nil
	}
	path := opts.Session.Path()
	a.mu.Lock()
	defer a.mu.Unlock()
	r, ok := a.recorders[path]
	if !ok {
		var err error
		if r, err = replay.NewRecorder(path); err != nil {
			return err
		}
		// A shared session (the sessions bucket) is recorded there too, so
		// that another replica's dashboard inspects this one's turns.
		if m, ok := opts.Session.Backend().(replay.Mirror); ok {
			r.MirrorTo(m)
		}
		if a.recorders == nil {
			a.recorders = map[string]*replay.Recorder{}
		}
		a.recorders[path] = r
	}
	opts.RecordRequests = true
	opts.Observer = r.Wrap(opts.Observer)
	return nil
}

// closeRecorders flushes the recordings; a write that failed is logged (the
// session itself was saved).
func (a *app) closeRecorders() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for path, r := range a.recorders {
		if err := r.Close(); err != nil && a.log != nil {
			a.log.Warn("the session's recording is incomplete; replay it up to the last whole turn", "session", path, "err", err)
		}
	}
	a.recorders = nil
}
