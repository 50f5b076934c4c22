package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// longMarkdown is an answer with what a model writes: headings, paragraphs,
// lists, a code block, a table and a quote, ending in a marker line.
func longMarkdown() string {
	var b strings.Builder
	for i := 1; i <= 4; i++ {
		fmt.Fprintf(&b, "## Section %d\n\nParagraph %d says something worth reading about the matter at hand, long enough to wrap at eighty columns.\n\n", i, i)
		b.WriteString("- first point\n- second point with `code`\n- third point\n\n")
		if i%2 == 0 {
			fmt.Fprintf(&b, "```go\nfunc section%d() {\n\tfmt.Println(%d)\n}\n```\n\n", i, i)
		}
	}
	b.WriteString("| key | value |\n|---|---|\n| a | 1 |\n| b | 2 |\n\n> A closing quote.\n\n1. one\n2. two\n\nENDMARK the last line.")
	return b.String()
}

// answerLines are the printed lines from the answer's headline to its last
// line, as printed (styles included).
func answerLines(t *testing.T, printed string) []string {
	t.Helper()
	lines := strings.Split(printed, "\n")
	from, to := -1, -1
	for i, l := range lines {
		p := plain(l)
		if from < 0 && strings.Contains(p, "● Writing at length") {
			from = i
		}
		if strings.Contains(p, "ENDMARK") {
			to = i
		}
	}
	if from < 0 || to < from {
		t.Fatalf("no answer (headline at %d, end at %d) in:\n%s", from, to, plain(printed))
	}
	return lines[from : to+1]
}

// TestLiveAndReplayedAnswersAreIdentical: a long Markdown answer streamed in
// small chunks prints the same lines, styles and all, as the same answer
// replayed when the session is resumed: one blank line after each heading and
// code block, none doubled.
func TestLiveAndReplayedAnswersAreIdentical(t *testing.T) {
	e := newEnv(t)
	text := longMarkdown()
	eng, _ := e.engine(t, "same", answerReply(text, 7, 2*time.Millisecond))
	u := start(t, eng)
	u.submit("write")
	u.waitPrinted("ENDMARK")
	u.idle()
	var live string
	u.inspect(func(m *Model) { live = m.Printed() })
	u2 := u.resumed(e, eng, "same")
	u2.waitPrinted("ENDMARK")
	var replayed string
	u2.inspect(func(m *Model) { replayed = m.Printed() })

	a, b := answerLines(t, live), answerLines(t, replayed)
	for i := 0; i < max(len(a), len(b)); i++ {
		var la, lb string
		if i < len(a) {
			la = a[i]
		}
		if i < len(b) {
			lb = b[i]
		}
		if la != lb {
			t.Fatalf("line %d differs:\nlive:     %q\nreplayed: %q\n--- live ---\n%s\n--- replayed ---\n%s", i+1, la, lb,
				plain(strings.Join(a, "\n")), plain(strings.Join(b, "\n")))
		}
	}
	for i := 1; i+1 < len(a); i++ {
		if blank(a[i]) && blank(a[i+1]) {
			t.Fatalf("two blank lines in a row at line %d:\n%s", i+1, plain(strings.Join(a, "\n")))
		}
	}
}

// TestRenderTrimsStyledBlankLines: a block rendered alone has no blank line,
// styled or not, at either end, so printed after one blank line it stands as
// within the whole answer.
func TestRenderTrimsStyledBlankLines(t *testing.T) {
	md := newMarkdown()
	for _, src := range []string{"# Heading\n\n", "```go\nfmt.Println(1)\n```\n\n", "- a\n- b\n\n", "> quoted\n\n", "Para.\n\n"} {
		out := strings.Split(md.render(src, 80), "\n")
		if blank(out[0]) || blank(out[len(out)-1]) {
			t.Errorf("render(%q) has a blank line at an end: %q", src, out)
		}
	}
}

// TestParagraphs: the cuts are the blank lines outside code fences.
func TestParagraphs(t *testing.T) {
	tests := []struct {
		src  string
		want []string
	}{
		{"a\n\nb", []string{"a\n\n", "b"}},
		{"# H\n\n\n\npara\n\n", []string{"# H\n\n", "para\n\n"}},
		{"```\nx\n\ny\n```\n\nafter", []string{"```\nx\n\ny\n```\n\n", "after"}},
		{"", nil},
	}
	for _, tc := range tests {
		got := paragraphs(tc.src)
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("paragraphs(%q) = %q, want %q", tc.src, got, tc.want)
		}
	}
}
