package route_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/server/route"
)

// TestDocsNameEveryCode: docs/api.md's list of error codes and its error
// table name exactly the codes route declares, so a code the server sends
// is one the docs explain (the oversized body is body_too_large everywhere).
func TestDocsNameEveryCode(t *testing.T) {
	b, err := os.ReadFile("../../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	tick := regexp.MustCompile("`([a-z_]+)`")
	list := doc[strings.Index(doc, "Codes (`server/route/codes.go`"):]
	list = list[:strings.Index(list, "\n\n")]
	section := doc[strings.Index(doc, "| status | code | when |"):strings.Index(doc, "## Server, keys")]
	var table []string
	for _, line := range strings.Split(section, "\n")[2:] {
		if cells := strings.Split(line, "|"); len(cells) == 5 {
			table = append(table, cells[2])
		}
	}
	for _, tc := range []struct{ name, text string }{
		{"the Codes list", list},
		{"the error table", strings.Join(table, " ")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var named []string
			for _, m := range tick.FindAllStringSubmatch(tc.text, -1) {
				named = append(named, m[1])
				if !slices.Contains(route.Codes[:], m[1]) {
					t.Errorf("docs/api.md names code %q, which server/route/codes.go does not declare", m[1])
				}
			}
			for _, c := range route.Codes {
				if !slices.Contains(named, c) {
					t.Errorf("%s in docs/api.md lacks code %q", tc.name, c)
				}
			}
		})
	}
}
