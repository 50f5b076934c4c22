package deltas

import (
	"context"
	"sync"
	"time"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// hub is the one live watch of the memory service, fanned out to the open
// streams. It starts with the first subscriber, from the journal's end, and
// follows the journal until closed, watching again (from where it was) when
// the service goes away and comes back.
type hub struct {
	s      *Service
	buffer int
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	subs    map[*sub]struct{}
	started bool
	done    chan struct{}
	dropped int // streams told to catch up, for tests and logs
}

// sub is one stream's queue: closed by the hub when the stream fell behind
// (behind is then true) or the hub stopped.
type sub struct {
	ch     chan batch
	behind bool
}

func newHub(s *Service, buffer int) *hub {
	ctx, cancel := context.WithCancel(context.Background())
	return &hub{s: s, buffer: buffer, ctx: ctx, cancel: cancel, subs: map[*sub]struct{}{}, done: make(chan struct{})}
}

// subscribe adds a queue that gets every journal event the hub reads from now
// on; it fails once the hub is closed.
func (h *hub) subscribe() (*sub, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ctx.Err() != nil {
		return nil, false
	}
	if !h.started {
		h.started = true
		ready := make(chan struct{})
		go h.run(ready)
		h.mu.Unlock()
		<-ready
		h.mu.Lock()
	}
	u := &sub{ch: make(chan batch, h.buffer)}
	h.subs[u] = struct{}{}
	return u, true
}

func (h *hub) unsubscribe(u *sub) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.subs[u]; ok {
		delete(h.subs, u)
		close(u.ch)
	}
}

// publish queues b for every stream; one whose queue is full is closed as
// behind, so its handler tells the client to catch up.
func (h *hub) publish(b batch) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for u := range h.subs {
		select {
		case u.ch <- b:
		default:
			u.behind = true
			delete(h.subs, u)
			close(u.ch)
			h.dropped++
			h.s.log.Info("a delta stream fell behind; told to catch up", "seq", b.seq)
		}
	}
}

// run follows the journal from its current end. ready is closed once the
// starting point is known, so a subscriber misses nothing written after it
// subscribed.
func (h *hub) run(ready chan struct{}) {
	defer close(h.done)
	var after uint64
	for {
		st, err := h.s.mem.Stats(h.ctx, &exocortexv1.MemoryStatsRequest{})
		if err == nil {
			after = st.GetJournalSeq()
			break
		}
		if !h.sleep() {
			close(ready)
			return
		}
	}
	close(ready)
	for h.ctx.Err() == nil {
		err := h.s.read(h.ctx, after, true, func(b batch) error {
			after = b.seq
			h.publish(b)
			return nil
		})
		if err != nil && h.ctx.Err() == nil {
			h.s.log.Warn("the delta watch ended; watching again", "after", after, "err", err)
		}
		if !h.sleep() {
			return
		}
	}
}

func (h *hub) sleep() bool {
	select {
	case <-h.ctx.Done():
		return false
	case <-time.After(200 * time.Millisecond):
		return true
	}
}

func (h *hub) close() {
	h.mu.Lock()
	h.cancel()
	started := h.started
	for u := range h.subs {
		delete(h.subs, u)
		close(u.ch)
	}
	h.mu.Unlock()
	if started {
		<-h.done
	}
}

func (h *hub) droppedCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.dropped
}
