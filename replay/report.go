package replay

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// Report is what a replay found.
type Report struct {
	Source     string `json:"source"`
	Turns      int    `json:"turns"`
	Iterations int    `json:"iterations"`
	// Differences are the iterations that differ, in order.
	Differences []IterationDiff `json:"differences"`
	// Divergences are the turns whose path parted from the recording's.
	Divergences []Divergence `json:"divergences"`
	// Timing is the time each extension took, recorded and replayed.
	Timing []ExtensionTime `json:"timing"`
	// RecordedUS is the recorded monologues' wall time, ReplayedUS the replay's.
	RecordedUS int64 `json:"recorded_us"`
	ReplayedUS int64 `json:"replayed_us"`

	timing map[string]*ExtensionTime
}

// IterationDiff is what one iteration did otherwise (iteration 0 is the
// turn's opening: the user message's hooks).
type IterationDiff struct {
	Turn        int          `json:"turn"`
	Iteration   int          `json:"iteration"`
	Differences []Difference `json:"differences"`
}

// Divergence is where a replayed turn parted from the recording: at this
// turn and iteration the loop took another path, and the turn stopped there.
type Divergence struct {
	Turn      int    `json:"turn"`
	Iteration int    `json:"iteration"`
	Recorded  string `json:"recorded"`
	Replayed  string `json:"replayed"`
}

// ExtensionTime is one extension's time over the whole session.
type ExtensionTime struct {
	Plugin     string `json:"plugin"`
	Extension  string `json:"extension"`
	Hook       string `json:"hook"`
	Calls      int    `json:"calls"`
	RecordedUS int64  `json:"recorded_us"`
	ReplayedUS int64  `json:"replayed_us"`
}

// Clean reports whether the replay found no difference at all.
func (r *Report) Clean() bool { return len(r.Differences) == 0 && len(r.Divergences) == 0 }

func (r *Report) add(rec, got *Turn, div *Divergence) {
	if rec.TookUS > 0 {
		r.RecordedUS += rec.TookUS
	}
	last := len(rec.Iterations)
	if div != nil {
		r.Divergences = append(r.Divergences, *div)
		last = min(last, div.Iteration)
	}
	pair := func(n int, a, b *Iteration) {
		if a == nil {
			a = &Iteration{N: n}
		}
		if b == nil {
			b = &Iteration{N: n}
		}
		r.time(a, b)
		if ds := Compare(a, b); len(ds) > 0 {
			r.Differences = append(r.Differences, IterationDiff{Turn: rec.N, Iteration: n, Differences: ds})
		}
	}
	pair(0, rec.Opening, got.Opening)
	for n := 1; n <= last; n++ {
		r.Iterations++
		var a, b *Iteration
		if n <= len(rec.Iterations) {
			a = rec.Iterations[n-1]
		}
		if n <= len(got.Iterations) {
			b = got.Iterations[n-1]
		}
		if b == nil && div != nil {
			continue // the replay stopped before it
		}
		pair(n, a, b)
	}
}

func (r *Report) time(rec, got *Iteration) {
	if r.timing == nil {
		r.timing = map[string]*ExtensionTime{}
	}
	at := func(p, x, h string) *ExtensionTime {
		k := p + "\x00" + x + "\x00" + h
		t, ok := r.timing[k]
		if !ok {
			t = &ExtensionTime{Plugin: p, Extension: x, Hook: h}
			r.timing[k] = t
		}
		return t
	}
	for _, h := range rec.Hooks {
		at(h.Plugin, h.Extension, h.Hook).RecordedUS += h.DurationUS
	}
	for _, h := range got.Hooks {
		t := at(h.Plugin, h.Extension, h.Hook)
		t.ReplayedUS += h.DurationUS
		t.Calls++
	}
	r.Timing = r.Timing[:0]
	for _, t := range r.timing {
		r.Timing = append(r.Timing, *t)
	}
	sort.Slice(r.Timing, func(i, j int) bool {
		a, b := r.Timing[i], r.Timing[j]
		if a.ReplayedUS != b.ReplayedUS {
			return a.ReplayedUS > b.ReplayedUS
		}
		return a.Plugin+a.Extension+a.Hook < b.Plugin+b.Extension+b.Hook
	})
}

// WriteText writes the readable diff: per turn and iteration what differs,
// the divergences, and the slowest extensions.
func (r *Report) WriteText(w io.Writer) {
	fmt.Fprintf(w, "replayed %d turns, %d iterations of %s\n", r.Turns, r.Iterations, r.Source)
	divs := map[int]Divergence{}
	for _, d := range r.Divergences {
		divs[d.Turn] = d
	}
	turn := 0
	for _, id := range r.Differences {
		if id.Turn != turn {
			turn = id.Turn
			fmt.Fprintf(w, "\nturn %d\n", turn)
		}
		where := fmt.Sprintf("iteration %d", id.Iteration)
		if id.Iteration == 0 {
			where = "opening"
		}
		fmt.Fprintf(w, "  %s\n", where)
		for _, d := range id.Differences {
			fmt.Fprintf(w, "    %s\n", d.line())
		}
	}
	for _, d := range r.Divergences {
		fmt.Fprintf(w, "\ndiverged at turn %d, iteration %d (the turn stopped there)\n  recorded: %s\n  replayed: %s\n", d.Turn, d.Iteration, d.Recorded, d.Replayed)
	}
	if r.Clean() {
		fmt.Fprintln(w, "no difference")
	} else {
		n := 0
		for _, id := range r.Differences {
			n += len(id.Differences)
		}
		fmt.Fprintf(w, "\n%d differences in %d iterations, %d divergences\n", n, len(r.Differences), len(r.Divergences))
	}
	if len(r.Timing) > 0 {
		fmt.Fprintln(w, "\nslowest extensions (replayed / recorded):")
		for _, t := range r.Timing[:min(5, len(r.Timing))] {
			fmt.Fprintf(w, "  %-40s %8s / %8s  (%d calls)\n", t.Plugin+"/"+t.Extension+" @"+t.Hook, us(t.ReplayedUS), us(t.RecordedUS), t.Calls)
		}
	}
	if r.RecordedUS > 0 {
		fmt.Fprintf(w, "replay took %s; the session took %s\n", us(r.ReplayedUS), us(r.RecordedUS))
	}
}

func us(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.2fs", float64(n)/1e6)
	case n >= 1000:
		return fmt.Sprintf("%.1fms", float64(n)/1e3)
	}
	return fmt.Sprintf("%dµs", n)
}

// line is a difference on one line.
func (d Difference) line() string {
	by := ""
	if d.Extension != "" {
		by = " by " + d.Extension
		if d.Hook != "" {
			by += " @" + d.Hook
		}
		if d.Plugin != "" {
			by += " (" + d.Plugin + ")"
		}
	}
	what := d.What
	if what != "" {
		what = " " + quote(what)
	}
	switch d.Kind {
	case BlockAdded:
		return "+ block" + what + by + ": " + clip(d.Replayed)
	case BlockRemoved:
		return "- block" + what + by + ": " + clip(d.Recorded)
	case BlockChanged:
		return "~ block" + what + by + ": " + clip(d.Recorded) + " → " + clip(d.Replayed)
	case SystemPrompt, History:
		return "~ " + strings.ReplaceAll(d.Kind, "_", " ") + " differs at" + what + ": " + clip(d.Recorded) + " → " + clip(d.Replayed)
	}
	sign, text := "+", d.Replayed
	if d.Recorded != "" {
		sign, text = "-", d.Recorded
	}
	return sign + " " + strings.ReplaceAll(d.Kind, "_", " ") + what + by + ": " + clip(text)
}

func quote(s string) string { return fmt.Sprintf("%q", s) }

// clip keeps a text to one short line.
func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len([]rune(s)) > 100 {
		return string([]rune(s)[:99]) + "…"
	}
	if s == "" {
		return `""`
	}
	return s
}
