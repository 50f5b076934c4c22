package tui

import (
	"sync"

	tea "charm.land/bubbletea/v2"
)

// inbox carries what the agent loop's goroutine has to tell the Bubble Tea
// program (events, approval requests, the end of a turn) without ever
// blocking the loop: push appends to a slice and wakes the reader; the
// program's next read takes everything queued at once, so a burst of
// streamed chunks costs one update and one redraw.
type inbox struct {
	mu    sync.Mutex
	items []tea.Msg
	wake  chan struct{}
}

// inboxMsg is a batch of queued messages, in the order they were pushed.
type inboxMsg []tea.Msg

func newInbox() *inbox { return &inbox{wake: make(chan struct{}, 1)} }

// push queues msg; it never blocks.
func (b *inbox) push(msg tea.Msg) {
	b.mu.Lock()
	b.items = append(b.items, msg)
	b.mu.Unlock()
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// next is the command that waits for queued messages; Update issues it again
// after each batch.
func (b *inbox) next() tea.Msg {
	for {
		<-b.wake
		b.mu.Lock()
		items := b.items
		b.items = nil
		b.mu.Unlock()
		if len(items) > 0 {
			return inboxMsg(items)
		}
	}
}

// drain returns what is queued without waiting (for tests and line mode).
func (b *inbox) drain() []tea.Msg {
	b.mu.Lock()
	defer b.mu.Unlock()
	items := b.items
	b.items = nil
	select {
	case <-b.wake:
	default:
	}
	return items
}
