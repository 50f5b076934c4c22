package recall

import (
	"math"
	"slices"
	"testing"
)

// line is a sequence a b c d e: each id's neighbours on either side.
func line(ids ...string) Neighbours {
	pos := map[string]int{}
	for i, id := range ids {
		pos[id] = i
	}
	return func(id string) (before, after []string) {
		i, ok := pos[id]
		if !ok {
			return nil, nil
		}
		for j := i - 1; j >= 0; j-- {
			before = append(before, ids[j])
		}
		for j := i + 1; j < len(ids); j++ {
			after = append(after, ids[j])
		}
		return before, after
	}
}

func close(a, b Scores) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || math.Abs(v-w) > 1e-9 {
			return false
		}
	}
	return true
}

func TestSmooth(t *testing.T) {
	nb := line("a", "b", "c", "d", "e")
	for _, tc := range []struct {
		name        string
		in          Scores
		beta, decay float64
		lookup      func(string) (float64, bool)
		want        Scores
	}{
		{"off", Scores{"c": 1}, 0, 0.5, nil, Scores{"c": 1}},
		{"one hit lifts both sides, decaying", Scores{"c": 1}, 0.5, 0.5, nil,
			Scores{"a": 0.25, "b": 0.5, "c": 1, "d": 0.5, "e": 0.25}},
		{"no decay: only the nearest counts", Scores{"c": 1}, 0.5, 0, nil,
			Scores{"a": 0, "b": 0.5, "c": 1, "d": 0.5, "e": 0}},
		{"two hits add up", Scores{"b": 1, "d": 1}, 0.5, 0, nil,
			Scores{"a": 0.5, "b": 1, "c": 1, "d": 1, "e": 0.5}},
		{"lookup scores neighbours outside the list", Scores{"c": 1}, 0.5, 0,
			func(id string) (float64, bool) { return 0.2, id == "b" },
			Scores{"a": 0.1, "b": 0.7, "c": 1.1, "d": 0.5, "e": 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Smooth(tc.in, tc.beta, tc.decay, nb, tc.lookup); !close(got, tc.want) {
				t.Errorf("Smooth = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestSmoothReplies(t *testing.T) {
	nb := line("a", "b", "c", "d", "e")
	asksB := func(id string) bool { return id == "b" }
	for _, tc := range []struct {
		name  string
		in    Scores
		reply float64
		asks  func(string) bool
		want  Scores
	}{
		{"no reply weight is Smooth", Scores{"b": 1}, 0, asksB,
			Scores{"a": 0.5, "b": 1, "c": 0.5, "d": 0.25, "e": 0.125}},
		{"no asks is Smooth", Scores{"b": 1}, 2, nil,
			Scores{"a": 0.5, "b": 1, "c": 0.5, "d": 0.25, "e": 0.125}},
		{"the record after a question takes 1+reply of its share", Scores{"b": 1}, 2, asksB,
			Scores{"a": 0.5, "b": 1, "c": 1.5, "d": 0.25, "e": 0.125}},
		{"only the nearest record after the question", Scores{"b": 1, "c": 0}, 1, asksB,
			Scores{"a": 0.5, "b": 1, "c": 1, "d": 0.25, "e": 0.125}},
		{"the question itself and the record before it are not lifted", Scores{"c": 1}, 2, asksB,
			Scores{"a": 0.25, "b": 0.5, "c": 1, "d": 0.5, "e": 0.25}},
		{"a record after a non-question is not lifted", Scores{"c": 1}, 2, func(id string) bool { return id == "a" },
			Scores{"a": 0.25, "b": 0.5, "c": 1, "d": 0.5, "e": 0.25}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := SmoothReplies(tc.in, 0.5, 0.5, tc.reply, tc.asks, nb, nil); !close(got, tc.want) {
				t.Errorf("SmoothReplies = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestNormalize(t *testing.T) {
	for _, tc := range []struct {
		name string
		fn   func(Scores) Scores
		in   Scores
		want Scores
	}{
		{"max", MaxNormalize, Scores{"a": 4, "b": 2, "c": 0}, Scores{"a": 1, "b": 0.5, "c": 0}},
		{"max of nothing", MaxNormalize, Scores{"a": 0}, Scores{"a": 0}},
		{"min-max", MinMaxNormalize, Scores{"a": 0.9, "b": 0.7, "c": 0.5}, Scores{"a": 1, "b": 0.5, "c": 0}},
		{"min-max of equals", MinMaxNormalize, Scores{"a": 0.3, "b": 0.3}, Scores{"a": 1, "b": 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.fn(tc.in); !close(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestWeightedSum(t *testing.T) {
	for _, tc := range []struct {
		name    string
		weights []float64
		lists   []Scores
		order   []string
		ranks   map[string][]int
	}{
		{"a weak second leg only breaks ties", []float64{1, 0.2},
			[]Scores{{"a": 1, "b": 0.9}, {"b": 1, "a": 0}}, []string{"b", "a"},
			map[string][]int{"a": {1, 2}, "b": {2, 1}}},
		{"a strong first leg wins", []float64{1, 0.2},
			[]Scores{{"a": 1, "b": 0.5}, {"b": 1, "c": 0.9}}, []string{"a", "b", "c"},
			map[string][]int{"a": {1, 0}, "b": {2, 1}, "c": {0, 2}}},
		{"default weights are 1", nil,
			[]Scores{{"a": 0.5}, {"b": 0.6}}, []string{"b", "a"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := WeightedSum(tc.weights, tc.lists...)
			var ids []string
			for _, f := range got {
				ids = append(ids, f.ID)
				if want, ok := tc.ranks[f.ID]; ok && !slices.Equal(f.Ranks, want) {
					t.Errorf("%s ranks %v, want %v", f.ID, f.Ranks, want)
				}
			}
			if !slices.Equal(ids, tc.order) {
				t.Errorf("order %v, want %v", ids, tc.order)
			}
		})
	}
	if got := Ranked(Scores{"x": 1, "y": 2, "z": 1}); !slices.Equal(got, []string{"y", "x", "z"}) {
		t.Errorf("Ranked = %v", got)
	}
}

// TestSmoothAsksOnce checks that Smooth asks for each record's neighbours and
// each outside score once, whatever the overlap of the candidates' windows, and
// gives the same scores as without the memo.
func TestSmoothAsksOnce(t *testing.T) {
	ids := []string{"a", "b", "c", "d", "e", "f", "g"}
	for _, tc := range []struct {
		name string
		in   Scores
	}{
		{"adjacent candidates", Scores{"c": 1, "d": 0.5, "e": 0.25}},
		{"scattered candidates", Scores{"a": 1, "d": 0.4, "g": 0.2}},
		{"one candidate", Scores{"d": 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			asked, looked := map[string]int{}, map[string]int{}
			plain := line(ids...)
			nb := func(id string) ([]string, []string) {
				asked[id]++
				b, a := plain(id)
				return b[:min(2, len(b))], a[:min(2, len(a))]
			}
			lookup := func(id string) (float64, bool) {
				looked[id]++
				return 0.1, id != "f"
			}
			got := Smooth(tc.in, 0.5, 0.5, nb, lookup)
			for id, n := range asked {
				if n != 1 {
					t.Errorf("neighbours of %s asked %d times", id, n)
				}
			}
			for id, n := range looked {
				if n != 1 {
					t.Errorf("score of %s looked up %d times", id, n)
				}
			}
			// The same sums computed directly.
			score := func(id string) float64 {
				if v, ok := tc.in[id]; ok {
					return v
				}
				if id == "f" {
					return 0
				}
				return 0.1
			}
			want := Scores{}
			for id := range got {
				b, a := nb(id)
				v := score(id)
				for _, side := range [][]string{b, a} {
					w := 0.5
					for _, n := range side {
						v += w * score(n)
						w *= 0.5
					}
				}
				want[id] = v
			}
			if !close(got, want) {
				t.Errorf("Smooth = %v, want %v", got, want)
			}
		})
	}
}

func TestMemoNeighbours(t *testing.T) {
	calls := 0
	nb := MemoNeighbours(func(id string) ([]string, []string) {
		calls++
		return []string{id + "-"}, []string{id + "+"}
	})
	for _, id := range []string{"a", "b", "a", "a", "b"} {
		if b, a := nb(id); b[0] != id+"-" || a[0] != id+"+" {
			t.Errorf("nb(%s) = %v %v", id, b, a)
		}
	}
	if calls != 2 {
		t.Errorf("%d calls for two ids, want 2", calls)
	}
	if MemoNeighbours(nil) != nil {
		t.Error("MemoNeighbours(nil) is not nil")
	}
}
