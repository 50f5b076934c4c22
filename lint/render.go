package lint

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// WriteText writes findings for people: one block per finding,
//
//	error EXO041 plugin=a extension=x: message
//	    fix: what to do
//
// with continuation lines of a message indented, then a summary line.
func WriteText(w io.Writer, fs []Finding) error {
	var b strings.Builder
	for _, f := range fs {
		loc := f.Location()
		if loc != "" {
			loc = " " + loc
		}
		msg := strings.ReplaceAll(strings.TrimRight(f.Message, "\n"), "\n", "\n    ")
		fmt.Fprintf(&b, "%s %s%s: %s\n    fix: %s\n", f.Severity, f.Code, loc, msg, f.Fix)
	}
	e, wn, i := Count(fs)
	fmt.Fprintf(&b, "%s, %s, %s\n", plural(e, "error"), plural(wn, "warning"), plural(i, "info"))
	_, err := io.WriteString(w, b.String())
	return err
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	if word == "info" {
		return fmt.Sprintf("%d infos", n)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// Report is the JSON form of a lint run.
type Report struct {
	Findings []Finding `json:"findings"`
	Errors   int       `json:"errors"`
	Warnings int       `json:"warnings"`
	Infos    int       `json:"infos"`
}

// WriteJSON writes findings for machines: a Report, indented, with a final newline.
func WriteJSON(w io.Writer, fs []Finding) error {
	r := Report{Findings: fs}
	if r.Findings == nil {
		r.Findings = []Finding{}
	}
	r.Errors, r.Warnings, r.Infos = Count(fs)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}
