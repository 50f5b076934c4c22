package secrets

import (
	_ "embed"
	"strings"
	"sync"
)

// commonWords are words and passwords of MinLength characters or more that
// ordinary text (or a guesser) holds: a secret equal to one is refused. One a
// line, lower case.
//
//go:embed words.txt
var commonWords string

// wordSet parses commonWords once; sync.OnceValue keeps it out of init.
var wordSet = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(commonWords) {
		m[w] = true
	}
	return m
})

func isCommonWord(v string) bool {
	return wordSet()[strings.ToLower(strings.TrimSpace(v))]
}
