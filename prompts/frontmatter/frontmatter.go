// Package frontmatter reads the YAML header of Exocortex prompt files.
//
// A prompt file may begin with a block fenced by two lines of three dashes:
//
//	---
//	signal: repeat
//	description: The reply repeated the previous one word for word.
//	---
//	Body text sent to the model...
//
// The signal field ties a framework message to a constant in package signals, so
// code identifies the message by that constant and never by its wording (the
// wording may change freely). The generator of package signals, the prompt loader
// and the wiring lint all read headers through this package, so they agree on
// what a header is and which signal names are legal.
package frontmatter

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Meta is the decoded front matter of one prompt file. Unknown keys are errors,
// so a misspelt "singal:" cannot silently drop a signal.
type Meta struct {
	// Signal is the snake_case name of the signal the prompt carries, or "".
	Signal string `yaml:"signal"`
	// Description says in one line when the message is sent.
	Description string `yaml:"description"`
}

// delimiter is the line that opens and closes a header.
const delimiter = "---"

// Split separates a header from the body. ok reports whether data starts with a
// header; without one, body is data unchanged. An opening delimiter without a
// closing one is an error, since the whole file would otherwise be taken as
// YAML or as body depending on luck.
func Split(data []byte) (header, body []byte, ok bool, err error) {
	first, rest, _ := cutLine(data)
	if string(trimCR(first)) != delimiter {
		return nil, data, false, nil
	}
	start := len(data) - len(rest)
	for pos := start; pos < len(data); {
		line, after, _ := cutLine(data[pos:])
		if string(trimCR(line)) == delimiter {
			return data[start:pos], data[len(data)-len(after):], true, nil
		}
		pos = len(data) - len(after)
	}
	return nil, nil, true, errors.New(`front matter opened with "---" on line 1 is never closed (add a line "---" after the header)`)
}

// cutLine returns the first line of b without its '\n', the rest after it, and
// whether a newline was found.
func cutLine(b []byte) (line, rest []byte, found bool) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return b, nil, false
	}
	return b[:i], b[i+1:], true
}

func trimCR(b []byte) []byte { return bytes.TrimSuffix(b, []byte("\r")) }

// Parse decodes the header of the file called name (used only in errors) and
// returns it with the body. A file without a header has an empty Meta.
func Parse(name string, data []byte) (Meta, []byte, error) {
	header, body, ok, err := Split(data)
	if err != nil {
		return Meta{}, nil, fmt.Errorf("%s: %w", name, err)
	}
	if !ok {
		return Meta{}, body, nil
	}
	var m Meta
	if len(bytes.TrimSpace(header)) > 0 {
		dec := yaml.NewDecoder(bytes.NewReader(header))
		dec.KnownFields(true)
		if err := dec.Decode(&m); err != nil {
			return Meta{}, nil, fmt.Errorf("%s: front matter: %w (allowed keys: signal, description)", name, err)
		}
	}
	m.Signal = strings.TrimSpace(m.Signal)
	m.Description = strings.Join(strings.Fields(m.Description), " ")
	if m.Signal != "" {
		if err := ValidSignal(m.Signal); err != nil {
			return Meta{}, nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	return m, body, nil
}

var signalPattern = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// ValidSignal reports whether s is a legal signal name: snake_case, starting
// with a letter, lower-case letters and digits, single underscores between
// words. The generator turns it into a Go name (tool_not_found → ToolNotFound)
// and a Python name (TOOL_NOT_FOUND), which is why the alphabet is narrow.
func ValidSignal(s string) error {
	if !signalPattern.MatchString(s) {
		return fmt.Errorf("signal %q is not a snake_case name (want lower-case words joined by single underscores, e.g. tool_not_found)", s)
	}
	return nil
}

// File is one prompt file with its decoded header.
type File struct {
	// Name is the file name relative to the directory read, e.g. "fw.msg_repeat.md".
	Name string
	Meta Meta
}

// ReadDir reads the header of every *.md file at the top of fsys, sorted by
// name. Use os.DirFS for a directory on disk, or prompts.Embedded for the
// built-in prompts. Every broken header is reported, each naming its file.
func ReadDir(fsys fs.FS) ([]File, error) {
	names, err := fs.Glob(fsys, "*.md")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var (
		files []File
		errs  []error
	)
	for _, name := range names {
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			errs = append(errs, fmt.Errorf("reading prompt %s: %w", name, err))
			continue
		}
		m, _, err := Parse(name, data)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		files = append(files, File{Name: path.Base(name), Meta: m})
	}
	return files, errors.Join(errs...)
}

// Decl is one declared signal: its value and the prompt file that carries it.
type Decl struct {
	Value       string
	PromptFile  string
	Description string
}

// Signals lists the signals declared by files, sorted by value. A signal
// declared by two files is an error naming both: each signal has exactly one
// prompt, so code that sends it knows which text goes out.
func Signals(files []File) ([]Decl, error) {
	owner := make(map[string]string)
	var (
		decls []Decl
		errs  []error
	)
	for _, f := range files {
		if f.Meta.Signal == "" {
			continue
		}
		if prev, dup := owner[f.Meta.Signal]; dup {
			errs = append(errs, fmt.Errorf("signal %q is declared by both %s and %s (each signal belongs to exactly one prompt file)", f.Meta.Signal, prev, f.Name))
			continue
		}
		owner[f.Meta.Signal] = f.Name
		decls = append(decls, Decl{Value: f.Meta.Signal, PromptFile: f.Name, Description: f.Meta.Description})
	}
	sort.Slice(decls, func(i, j int) bool { return decls[i].Value < decls[j].Value })
	return decls, errors.Join(errs...)
}
