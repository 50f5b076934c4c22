package lint

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/exocortex/exocortex/prompts/frontmatter"
)

// LoadPrompts reads the front matter of every *.md file at the top of builtin
// (the embedded prompts, shown as "prompts/NAME") and of each override directory
// (shown by path; directories that do not exist are skipped). A file whose
// header cannot be read is returned with Err set, so the lint reports it instead
// of stopping; only a directory that cannot be listed is an error.
func LoadPrompts(builtin fs.FS, overrideDirs ...string) ([]Prompt, error) {
	out, err := readPrompts(builtin, "prompts", true)
	if err != nil {
		return nil, err
	}
	for _, dir := range overrideDirs {
		ps, err := readPrompts(os.DirFS(dir), dir, false)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, ps...)
	}
	return out, nil
}

func readPrompts(fsys fs.FS, shown string, builtin bool) ([]Prompt, error) {
	if _, err := fs.Stat(fsys, "."); err != nil {
		return nil, err
	}
	names, err := fs.Glob(fsys, "*.md")
	if err != nil {
		return nil, fmt.Errorf("listing prompts in %s: %w", shown, err)
	}
	slices.Sort(names)
	var out []Prompt
	for _, name := range names {
		src := path.Join(shown, name)
		if !builtin {
			src = filepath.Join(shown, name)
		}
		p := Prompt{File: name, Source: src, Builtin: builtin}
		data, err := fs.ReadFile(fsys, name)
		if err == nil {
			var m frontmatter.Meta
			var body []byte
			m, body, err = frontmatter.Parse(src, data)
			p.Signal, p.Description, p.Opening, p.Phrases = m.Signal, m.Description, opening(string(body)), phrases(string(body))
		}
		p.Err = err
		out = append(out, p)
	}
	return out, nil
}

// phrases are the literal runs of a prompt's first line between its template
// variables ({{name}}), trimmed of spaces, quotes and punctuation; empty runs
// are left out.
func phrases(body string) []string {
	body = strings.TrimSpace(body)
	if i := strings.IndexByte(body, '\n'); i >= 0 {
		body = body[:i]
	}
	var out []string
	for body != "" {
		run := body
		if i := strings.Index(body, "{{"); i >= 0 {
			run, body = body[:i], body[i:]
			if j := strings.Index(body, "}}"); j >= 0 {
				body = body[j+2:]
			} else {
				body = ""
			}
		} else {
			body = ""
		}
		if run = strings.Trim(run, phraseTrim); run != "" {
			out = append(out, run)
		}
	}
	return out
}

// phraseTrim is what a phrase is trimmed of at both ends.
const phraseTrim = " \t:;,.!?\"'`()[]"

// opening is the first line of a prompt's text, cut before its first template
// variable and trimmed.
func opening(body string) string {
	body = strings.TrimSpace(body)
	if i := strings.IndexByte(body, '\n'); i >= 0 {
		body = body[:i]
	}
	if i := strings.Index(body, "{{"); i >= 0 {
		body = body[:i]
	}
	return strings.TrimSpace(body)
}
