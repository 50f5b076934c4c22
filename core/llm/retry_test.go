package llm

import (
	"net/http"
	"testing"
	"time"
)

// TestRetryDelay: the wait a retry announces is the one openai-go takes at
// most: the server's Retry-After within the cap, else the doubling backoff.
func TestRetryDelay(t *testing.T) {
	tests := []struct {
		name    string
		header  map[string]string
		attempt int
		cap     time.Duration
		want    time.Duration
		retried bool
	}{
		{name: "first backoff", attempt: 0, want: 500 * time.Millisecond, retried: true},
		{name: "third backoff", attempt: 2, want: 2 * time.Second, retried: true},
		{name: "backoff capped by default", attempt: 6, want: 8 * time.Second, retried: true},
		{name: "backoff capped by config", attempt: 3, cap: time.Second, want: time.Second, retried: true},
		{name: "retry-after seconds", header: map[string]string{"Retry-After": "3"}, want: 3 * time.Second, retried: true},
		{name: "retry-after-ms first", header: map[string]string{"Retry-After-Ms": "250", "Retry-After": "3"}, want: 250 * time.Millisecond, retried: true},
		{name: "retry-after over the cap is not retried", header: map[string]string{"Retry-After": "30"}, cap: 8 * time.Second, want: 30 * time.Second},
		{name: "retry-after under the default two minutes", header: map[string]string{"Retry-After": "30"}, want: 30 * time.Second, retried: true},
	}
	for _, tt := range tests {
		res := &http.Response{Header: http.Header{}}
		for k, v := range tt.header {
			res.Header.Set(k, v)
		}
		got, retried := retryDelay(res, tt.attempt, tt.cap)
		if got != tt.want || retried != tt.retried {
			t.Errorf("%s: %v, %v; want %v, %v", tt.name, got, retried, tt.want, tt.retried)
		}
	}
	r := Retry{Address: "http://h/v1", Path: "chat/completions", Attempt: 1, Of: 6, Status: 503, Delay: 2 * time.Second}
	if got := r.Short(); got != "retrying in ≤2s (HTTP 503) 1/5" {
		t.Errorf("Short() = %q", got)
	}
	if got := r.String(); got != "HTTP 503 from http://h/v1 (chat/completions), attempt 1 of 6; retrying in ≤2s" {
		t.Errorf("String() = %q", got)
	}
}
