package host

import (
	"github.com/exocortex/exocortex/core/discover"
)

// EventSkipped: something in a plugin directory looks meant to load but does
// not (discover.Skip), or a plugin directory entry cannot load.
const EventSkipped = "skipped"

// noteSkips records, once at load, what discovery passes over in the
// directories scanned: files without their execute bit, configured directories
// that do not exist, entries that cannot be read as plugins. Each becomes a
// notice (stderr of run, the welcome card, `plugins status`) and an event, so
// nothing is skipped without a word; Skipped hands them to the lint.
func (h *Host) noteSkips() {
	res := discover.Scan(h.rl.dirs)
	for _, s := range res.Skipped {
		h.rl.skipped = append(h.rl.skipped, s)
		h.rl.notices = append(h.rl.notices, s.Message+" ("+s.Fix+")")
		h.emit(Event{Kind: EventSkipped, Detail: s.Message})
	}
	for _, p := range res.Problems {
		n := p.Path + " cannot be loaded as a plugin: " + p.Err.Error()
		h.rl.notices = append(h.rl.notices, n)
		h.emit(Event{Kind: EventSkipped, Detail: n})
	}
}

// Skipped lists what the loader passed over at load although it looks meant to
// load: untrusted projects' plugin directories, files without their execute
// bit, configured directories that do not exist.
func (h *Host) Skipped() []discover.Skip {
	h.rl.mu.Lock()
	defer h.rl.mu.Unlock()
	return append([]discover.Skip(nil), h.rl.skipped...)
}
