package toolstream

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestStreamerCoalesces: pieces written while a report is in flight go out
// together in the next one, never more often than the interval; a character
// split across writes is never split across reports; a backlog beyond the
// bound is dropped from the report with a note; a failed report turns the
// streamer off; close reports what is left.
func TestStreamerCoalesces(t *testing.T) {
	type write struct {
		text  string
		pause time.Duration
	}
	tests := []struct {
		name    string
		writes  []write
		fail    bool
		want    func(t *testing.T, reports []string)
		every   time.Duration
		reports int // at most
	}{
		{name: "burst is one or two reports", every: 200 * time.Millisecond,
			writes: []write{{"a", 0}, {"b", 0}, {"c", 0}, {"d", 0}},
			want: func(t *testing.T, r []string) {
				if strings.Join(r, "") != "abcd" || len(r) > 2 {
					t.Errorf("reports %q, want abcd in at most two", r)
				}
			}},
		{name: "pauses make pieces", every: 10 * time.Millisecond,
			writes: []write{{"one\n", 150 * time.Millisecond}, {"two\n", 150 * time.Millisecond}, {"three\n", 0}},
			want: func(t *testing.T, r []string) {
				if strings.Join(r, "") != "one\ntwo\nthree\n" || len(r) != 3 {
					t.Errorf("reports %q, want one piece per pause", r)
				}
			}},
		{name: "split character", every: 10 * time.Millisecond,
			writes: []write{{"é"[:1], 100 * time.Millisecond}, {"é"[1:] + "x", 0}},
			want: func(t *testing.T, r []string) {
				for _, s := range r {
					if !strings.HasPrefix("éx", s) && !strings.HasSuffix("éx", s) {
						t.Errorf("report %q splits a character (all: %q)", s, r)
					}
				}
				if strings.Join(r, "") != "éx" {
					t.Errorf("reports %q, want éx", r)
				}
			}},
		{name: "backlog dropped with a note", every: time.Hour,
			writes: []write{{"first", 50 * time.Millisecond}, {strings.Repeat("x", Backlog+10) + "end", 0}},
			want: func(t *testing.T, r []string) {
				if len(r) != 2 || r[0] != "first" || !strings.HasPrefix(r[1], "[… 13 bytes of output not shown …]\n") || !strings.HasSuffix(r[1], "end") {
					t.Errorf("reports %.80q", r)
				}
			}},
		{name: "failure stops reporting", every: 10 * time.Millisecond, fail: true,
			writes: []write{{"a", 50 * time.Millisecond}, {"b", 50 * time.Millisecond}, {"c", 0}},
			want: func(t *testing.T, r []string) {
				if len(r) != 1 || r[0] != "a" {
					t.Errorf("reports after a failure: %q", r)
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var reports []string
			s := New(t.Context(), tc.every, func(_ context.Context, d string) error {
				mu.Lock()
				reports = append(reports, d)
				mu.Unlock()
				if tc.fail {
					return errors.New("no tool call with this context is running")
				}
				return nil
			})
			for _, w := range tc.writes {
				_, _ = s.Write([]byte(w.text))
				time.Sleep(w.pause)
			}
			s.Close()
			mu.Lock()
			defer mu.Unlock()
			tc.want(t, reports)
		})
	}
}
