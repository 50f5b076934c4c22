package recall

import (
	"math"
	"testing"
)

func TestRRF(t *testing.T) {
	bm25 := []string{"a", "b", "c"}
	vec := []string{"c", "a", "d"}
	got := RRF(0, nil, bm25, vec)
	want := []struct {
		id    string
		ranks [2]int
		score float64
	}{
		{"a", [2]int{1, 2}, 1.0/61 + 1.0/62},
		{"c", [2]int{3, 1}, 1.0/63 + 1.0/61},
		{"b", [2]int{2, 0}, 1.0 / 62},
		{"d", [2]int{0, 3}, 1.0 / 63},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d fused, want %d", len(got), len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.ID != w.id || g.Ranks[0] != w.ranks[0] || g.Ranks[1] != w.ranks[1] || math.Abs(g.Score-w.score) > 1e-12 {
			t.Errorf("fused[%d] = %+v, want %+v", i, g, w)
		}
	}
	// k changes the scores; weights scale a list.
	k1 := RRF(1, []float64{2, 0}, bm25, vec)
	if k1[0].ID != "a" || math.Abs(k1[0].Score-2.0/2) > 1e-12 {
		t.Fatalf("weighted k=1: %+v", k1[0])
	}
	// A duplicate inside one list counts once.
	d := RRF(60, nil, []string{"x", "x"})
	if len(d) != 1 || d[0].Score != 1.0/61 {
		t.Fatalf("duplicate: %+v", d)
	}
}

func TestRecencyFactor(t *testing.T) {
	cases := []struct{ age, hl, w, want float64 }{
		{0, 10, 0.5, 1},
		{10, 10, 0.5, 0.75},
		{1e9, 10, 0.5, 0.5},
		{10, 0, 0.5, 1},
		{10, 10, 0, 1},
		{-5, 10, 1, 1},
	}
	for _, c := range cases {
		if got := RecencyFactor(c.age, c.hl, c.w); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("RecencyFactor(%v, %v, %v) = %v, want %v", c.age, c.hl, c.w, got, c.want)
		}
	}
}

func TestMMRPrefersDiversity(t *testing.T) {
	fs := []Fused{{ID: "a", Score: 1}, {ID: "a2", Score: 0.95}, {ID: "b", Score: 0.9}}
	// a and a2 are near-duplicates; b is different.
	sim := func(i, j int) float64 {
		if (fs[i].ID[0] == 'a') == (fs[j].ID[0] == 'a') {
			return 1
		}
		return 0
	}
	got := MMR(fs, 2, 0.5, sim)
	if len(got) != 2 || got[0].ID != "a" || got[1].ID != "b" {
		t.Fatalf("MMR(0.5) = %v, want a then b", got)
	}
	got = MMR(fs, 2, 1, sim)
	if got[1].ID != "a2" {
		t.Fatalf("MMR(1) should keep the relevance order, got %v", got)
	}
	if MMR(fs, 0, 0.5, sim) != nil || len(MMR(fs, 10, 0.5, sim)) != 3 {
		t.Fatal("MMR bounds")
	}
}

func TestBudget(t *testing.T) {
	sizes := []int{10, 20, 30, 5}
	cost := func(i int) int { return sizes[i] }
	for _, c := range []struct{ budget, n, used int }{{0, 4, 65}, {35, 2, 30}, {9, 0, 0}, {60, 3, 60}} {
		n, used := Budget(len(sizes), c.budget, cost)
		if n != c.n || used != c.used {
			t.Errorf("Budget(%d) = %d, %d; want %d, %d", c.budget, n, used, c.n, c.used)
		}
	}
	if EstimateTokens("") != 0 || EstimateTokens("abcd") != 1 || EstimateTokens("abcde") != 2 {
		t.Fatal("EstimateTokens")
	}
}
