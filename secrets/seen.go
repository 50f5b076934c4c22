package secrets

import (
	"sync"
	"unsafe"
)

// seenMin is the shortest string whose Contains result is remembered: a
// shorter one costs less to scan again than to look up.
const seenMin = 512

// seenMax bounds the remembered strings; the cache starts over past it.
const seenMax = 4096

// seenCache remembers whether a string holds a secret, keyed by the string's
// identity (its data pointer and length), not its content, so a lookup costs
// no pass over the text. The entry keeps the string itself, so its memory
// cannot be freed and reused for another text while the key stands: Go
// strings are immutable, and one pointer and length always mean one content.
type seenCache struct {
	mu sync.Mutex
	m  map[seenKey]seenEntry
}

type seenKey struct {
	p *byte
	n int
}

type seenEntry struct {
	s   string // keeps the key's memory alive
	hit bool
}

func keyOf(s string) seenKey { return seenKey{unsafe.StringData(s), len(s)} }

func (c *seenCache) get(s string) (hit, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[keyOf(s)]
	return e.hit, ok
}

func (c *seenCache) put(s string, hit bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= seenMax {
		c.m = make(map[seenKey]seenEntry, 256)
	}
	c.m[keyOf(s)] = seenEntry{s: s, hit: hit}
}
