package mcpclient

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Secrets in a server's configuration: the values of env and headers may
// hold §§secret(NAME) placeholders (config.yaml and the plugin settings keep
// only those), which Options.Secrets resolves when the server is started, in
// the copy handed to its process or its HTTP client alone. A resolved value
// is masked back to its placeholder in every status, report and error the
// set gives (its stderr included); the host masks it in everything else that
// crosses it.

// placeholderMark starts a secret's placeholder; placeholderRE finds one
// (secrets.Placeholder's form).
const placeholderMark = "§§secret("

var placeholderRE = regexp.MustCompile(`§§secret\([A-Za-z_][A-Za-z0-9_]*\)`)

// resolve is values with their placeholders resolved, naming the server and
// the field (env or headers) of one that cannot be.
func (s *Set) resolve(server, field string, values map[string]string) (map[string]string, error) {
	out := make(map[string]string, len(values))
	for k, v := range values {
		if !strings.Contains(v, placeholderMark) {
			out[k] = v
			continue
		}
		if s.secrets == nil {
			return nil, fmt.Errorf("%s.%s of MCP server %s holds a secret's placeholder, but no secrets reach the plugin: %s", field, k, server, v)
		}
		var failed error
		r := placeholderRE.ReplaceAllStringFunc(v, func(p string) string {
			val, err := s.secrets(p)
			if err != nil {
				failed = errors.Join(failed, err)
				return p
			}
			if val != "" && val != p {
				s.resolvedMu.Lock()
				s.resolved[val] = p
				s.resolvedMu.Unlock()
			}
			return val
		})
		if failed != nil {
			return nil, fmt.Errorf("%s.%s of MCP server %s: %w", field, k, server, failed)
		}
		out[k] = r
	}
	return out, nil
}

// mask puts the placeholders back in place of the values resolved.
func (s *Set) mask(text string) string {
	if text == "" {
		return text
	}
	s.resolvedMu.Lock()
	defer s.resolvedMu.Unlock()
	for v, p := range s.resolved {
		text = strings.ReplaceAll(text, v, p)
	}
	return text
}
