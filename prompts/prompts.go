// Package prompts holds the text Exocortex sends to the model: the system prompt
// and the framework messages the loop adds to the history (a repeated reply, a
// misformatted reply, an unknown tool, ...).
//
// The files are Markdown, embedded in the binary, and can be overridden one by
// one: a file with the same name in a project directory (.exocortex/prompts/)
// wins over one in the user directory ($EXOCORTEX_HOME/prompts/), which wins over
// the built-in copy. Placeholders are written {{name}} and filled by Render.
//
// A framework message names its signal in YAML front matter (see package
// prompts/frontmatter). Package signals is generated from those headers, so code
// recognises a message by its signal constant, never by its text: rewording a
// prompt, here or in an override, cannot break an extension. An override that
// leaves out the header keeps the built-in signal; one that declares another
// signal is refused.
package prompts

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/exocortex/exocortex/config"
	"github.com/exocortex/exocortex/prompts/frontmatter"
)

//go:embed *.md
var builtin embed.FS

// Embedded returns the built-in prompt files (read-only), e.g. for
// frontmatter.ReadDir.
func Embedded() fs.FS { return builtin }

// Ext is the extension every prompt file has.
const Ext = ".md"

// Prompt is one loaded prompt file.
type Prompt struct {
	// Name is the file name without ".md", e.g. "fw.msg_repeat".
	Name string
	// Source says where the text came from: a file path, or "embedded:NAME.md".
	Source string
	// Signal is the signal the prompt carries ("" for none). For an override
	// without front matter it is the built-in prompt's signal.
	Signal string
	// Description says when the prompt is used.
	Description string
	// Body is the text after the front matter, with surrounding blank space trimmed.
	Body string
}

// placeholder matches {{name}}, spaces inside the braces allowed.
var placeholder = regexp.MustCompile(`\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}`)

// Placeholders returns the names of the body's placeholders, sorted, each once.
func (p Prompt) Placeholders() []string {
	seen := make(map[string]bool)
	var names []string
	for _, m := range placeholder.FindAllStringSubmatch(p.Body, -1) {
		if !seen[m[1]] {
			seen[m[1]] = true
			names = append(names, m[1])
		}
	}
	sort.Strings(names)
	return names
}

// Render fills every {{name}} in the body from vars (values are formatted with
// fmt.Sprint). A placeholder without a value is an error naming the prompt and
// the variable; variables the body does not use are ignored. Values are inserted
// verbatim and not scanned again, so a tool output containing "{{x}}" is safe.
func (p Prompt) Render(vars map[string]any) (string, error) {
	var missing []string
	out := placeholder.ReplaceAllStringFunc(p.Body, func(m string) string {
		name := placeholder.FindStringSubmatch(m)[1]
		v, ok := vars[name]
		if !ok {
			missing = append(missing, name)
			return m
		}
		return fmt.Sprint(v)
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("prompt %s (%s): no value for %s", p.Name, p.Source, joinVars(missing))
	}
	return out, nil
}

func joinVars(names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = "{{" + n + "}}"
	}
	return strings.Join(quoted, ", ")
}

// Loader finds prompt files in override directories, then in the built-in set.
// It reads the disk on every Load, so an edited override takes effect on the next
// message without a restart. It is safe for concurrent use.
type Loader struct {
	dirs []string
	// signals maps each signal to the built-in prompt that carries it, read
	// from the embedded files' front matter once: they cannot change, and
	// reading them all for every signal the loop sends was a millisecond of
	// every iteration that ran a tool.
	signals func() (map[string]string, error)
}

// NewLoader returns a loader that looks in dirs in the order given (put the
// project directory first, then the user directory; see Dirs) and falls back to
// the built-in prompts. Directories that do not exist are skipped.
func NewLoader(dirs ...string) *Loader {
	return &Loader{dirs: append([]string(nil), dirs...), signals: sync.OnceValues(builtinSignals)}
}

// builtinSignals reads which built-in prompt carries each signal.
func builtinSignals() (map[string]string, error) {
	files, err := frontmatter.ReadDir(builtin)
	if err != nil {
		return nil, fmt.Errorf("built-in prompts: %w", err)
	}
	out := make(map[string]string, len(files))
	for _, f := range files {
		if sig := f.Meta.Signal; sig != "" {
			if _, dup := out[sig]; !dup { // the first file in name order, as before
				out[sig] = f.Name
			}
		}
	}
	return out, nil
}

// Dirs returns the override directories a session loads for a project rooted at
// projectDir: projectDir/.exocortex/prompts when the project is trusted
// (trusted_projects in config.yaml, `exocortex trust`), then
// $EXOCORTEX_HOME/prompts. An untrusted project's overrides are not loaded, like
// its plugins: a cloned repository could otherwise rewrite the system prompt
// and the action boundary's own messages. projectDir "" leaves the project
// directory out. home is the Exocortex home and trusted its trusted_projects,
// from the configuration the caller read once (config.Load).
func Dirs(projectDir, home string, trusted []string) []string {
	var dirs []string
	if projectDir != "" && config.ProjectTrusted(projectDir, trusted) {
		dirs = append(dirs, filepath.Join(projectDir, ".exocortex", "prompts"))
	}
	return append(dirs, filepath.Join(home, "prompts"))
}

// OverrideDirs is Dirs whether the project is trusted or not: for checking the
// files (the lint), never for loading them into a session.
func OverrideDirs(projectDir string) ([]string, error) {
	home, err := config.Home()
	if err != nil {
		return nil, err
	}
	var dirs []string
	if projectDir != "" {
		dirs = append(dirs, filepath.Join(projectDir, ".exocortex", "prompts"))
	}
	return append(dirs, filepath.Join(home, "prompts")), nil
}

// UntrustedOverrides returns the project's prompt directory when it holds files
// that Dirs leaves out because the project is not trusted, for a notice; "" else.
func UntrustedOverrides(projectDir, home string, trusted []string) string {
	if projectDir == "" {
		return ""
	}
	dirs := Dirs(projectDir, home, trusted)
	d := filepath.Join(projectDir, ".exocortex", "prompts")
	if len(dirs) > 0 && dirs[0] == d {
		return ""
	}
	if ents, err := os.ReadDir(d); err == nil && len(ents) > 0 {
		return d
	}
	return ""
}

// Load returns the prompt called name ("fw.msg_repeat" or "fw.msg_repeat.md").
func (l *Loader) Load(name string) (Prompt, error) {
	name = strings.TrimSuffix(name, Ext)
	if name == "" || strings.ContainsAny(name, `/\`) || strings.Contains(name, "..") {
		return Prompt{}, fmt.Errorf("prompt name %q: want a bare file name such as fw.msg_repeat", name)
	}
	file := name + Ext

	base, baseErr := parse(name, "embedded:"+file, func() ([]byte, error) { return builtin.ReadFile(file) })
	if baseErr != nil && !errors.Is(baseErr, fs.ErrNotExist) {
		return Prompt{}, baseErr
	}
	for _, dir := range l.dirs {
		path := filepath.Join(dir, file)
		p, err := parse(name, path, func() ([]byte, error) { return os.ReadFile(path) })
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return Prompt{}, err
		}
		if baseErr == nil {
			if p.Signal == "" {
				p.Signal = base.Signal
			} else if p.Signal != base.Signal {
				return Prompt{}, fmt.Errorf("prompt override %s declares signal %q but the built-in %s carries %q: an override may change the text, not the signal (remove the signal line or set it to %q)",
					path, p.Signal, file, base.Signal, base.Signal)
			}
			if p.Description == "" {
				p.Description = base.Description
			}
		}
		return p, nil
	}
	if baseErr != nil {
		where := "the built-in prompts"
		if len(l.dirs) > 0 {
			where = strings.Join(l.dirs, ", ") + " or the built-in prompts"
		}
		return Prompt{}, fmt.Errorf("prompt %s: no file %s in %s: %w", name, file, where, fs.ErrNotExist)
	}
	return base, nil
}

// LoadSignal returns the prompt that carries signal (a constant from package
// signals), with overrides applied. The loop sends framework messages this way,
// so the file a signal lives in is known in one place: its front matter.
func (l *Loader) LoadSignal(signal string) (Prompt, error) {
	read := l.signals
	if read == nil { // a Loader not made by NewLoader
		read = builtinSignals
	}
	names, err := read()
	if err != nil {
		return Prompt{}, err
	}
	if name, ok := names[signal]; ok && signal != "" {
		return l.Load(name)
	}
	return Prompt{}, fmt.Errorf("no built-in prompt carries signal %q (see package signals for the known ones)", signal)
}

// Render loads the prompt called name and fills its placeholders.
func (l *Loader) Render(name string, vars map[string]any) (string, error) {
	p, err := l.Load(name)
	if err != nil {
		return "", err
	}
	return p.Render(vars)
}

// parse reads one prompt file through read and splits off its front matter.
func parse(name, source string, read func() ([]byte, error)) (Prompt, error) {
	data, err := read()
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Prompt{}, err
		}
		return Prompt{}, fmt.Errorf("reading prompt %s: %w", source, err)
	}
	meta, body, err := frontmatter.Parse(source, data)
	if err != nil {
		return Prompt{}, err
	}
	return Prompt{
		Name:        name,
		Source:      source,
		Signal:      meta.Signal,
		Description: meta.Description,
		Body:        strings.TrimSpace(string(body)),
	}, nil
}
