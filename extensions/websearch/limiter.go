package websearch

import (
	"context"
	"sync"
	"time"
)

// Clock is the time source of the rate limiter; tests give a fake one that
// counts the waits instead of sleeping.
type Clock interface {
	Now() time.Time
	// Sleep waits d or until ctx ends, whichever is first.
	Sleep(ctx context.Context, d time.Duration) error
}

// SystemClock is the real clock.
type SystemClock struct{}

// Now is time.Now.
func (SystemClock) Now() time.Time { return time.Now() }

// Sleep waits d or until ctx ends.
func (SystemClock) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Limiter is a token bucket: it holds up to burst tokens, gains rate tokens per
// second, and each request takes one. A request that finds none reserves the next
// one and waits for it, so concurrent callers queue fairly, each a 1/rate apart.
type Limiter struct {
	rate  float64
	burst float64
	clock Clock

	mu     sync.Mutex
	tokens float64
	last   time.Time
}

// NewLimiter returns a full bucket.
func NewLimiter(rate float64, burst int, clock Clock) *Limiter {
	if clock == nil {
		clock = SystemClock{}
	}
	return &Limiter{rate: rate, burst: float64(max(burst, 1)), clock: clock, tokens: float64(max(burst, 1))}
}

// Wait takes a token, waiting for one if the bucket is empty, and returns how
// long it waited. If ctx ends first the reservation is given back.
func (l *Limiter) Wait(ctx context.Context) (time.Duration, error) {
	l.mu.Lock()
	now := l.clock.Now()
	if !l.last.IsZero() {
		l.tokens = min(l.burst, l.tokens+now.Sub(l.last).Seconds()*l.rate)
	}
	l.last = now
	l.tokens--
	var wait time.Duration
	if l.tokens < 0 {
		wait = time.Duration(-l.tokens / l.rate * float64(time.Second))
	}
	l.mu.Unlock()
	if wait <= 0 {
		return 0, nil
	}
	if err := l.clock.Sleep(ctx, wait); err != nil {
		l.mu.Lock()
		l.tokens++
		l.mu.Unlock()
		return 0, err
	}
	return wait, nil
}
