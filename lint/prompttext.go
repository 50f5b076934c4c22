package lint

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/exocortex/exocortex/core/discover"
)

// PromptText is a place where a plugin holds the opening text of a signal
// prompt: it recognises the core's message by its wording, which changes when
// the prompt is reworded or overridden, instead of by its signal (seam 1 again,
// the seed's REPEAT_SIGNAL = "LOOP DETECTED."; EXO017).
type PromptText struct {
	Plugin string `json:"plugin"`
	// File is where the text was found: the plugin's executable (Go string
	// data) or a source file beside it (Python, Go).
	File string `json:"file"`
	// Extension is the extension whose declaration comes nearest before the
	// text in a source file, or the plugin's only extension; "" when neither
	// tells.
	Extension string `json:"extension,omitempty"`
	// Prompt is the prompt file whose opening was found (its Source), Signal
	// the signal that marks its message.
	Prompt string `json:"prompt"`
	Signal string `json:"signal"`
	// Text is the text searched for and found.
	Text string `json:"text"`
}

// Bounds of the search: shorter openings are too common to mean the prompt;
// longer ones are cut at a word boundary, since a port tests a prefix
// ("LOOP DETECTED", not the whole sentence).
const (
	needleMin  = 12
	needleMax  = 20
	maxScanned = 256 << 20 // larger files are not read
	// quotedMin is the shortest phrase searched at all: a phrase shorter than
	// needleMin ("The call to", "was not run") is too common to mean the prompt
	// anywhere in an executable's string data, so it is looked for only in
	// source files, as a whole string literal ("The call to" or 'was not run'),
	// and only when it has two words or more.
	quotedMin = 8
)

// needle is the text looked for: the opening, cut to needleMax bytes at a word
// boundary; "" when it is shorter than needleMin.
func needle(opening string, max int) string {
	s := strings.TrimRight(opening, " \t:;,.!?\"'`")
	if len(s) > max {
		cut := s[:max]
		if i := strings.LastIndexByte(cut, ' '); i >= needleMin {
			cut = cut[:i]
		}
		s = cut
	}
	s = strings.TrimRight(s, " \t:;,.!?\"'`")
	if len(s) < needleMin {
		return ""
	}
	return s
}

// pluginFiles lists the files of a plugin worth searching: its executable,
// and for a plugin in a directory of its own the files in that directory and
// the source files below it (not the SDK copy, hidden directories or
// dependency trees). Built-in plugins (no Dir) embed the prompts themselves
// and are not searched.
func pluginFiles(p Plugin) []string {
	if p.Dir == "" || p.Path == "" {
		return nil
	}
	info, err := os.Stat(p.Path)
	if err != nil {
		return nil
	}
	root := p.Path
	var out []string
	if !info.IsDir() {
		out = append(out, p.Path)
		root = filepath.Dir(p.Path)
		if filepath.Clean(root) == filepath.Clean(p.Dir) {
			return out // a single file directly in the plugin directory
		}
	}
	_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			rel, _ := filepath.Rel(root, path)
			if path != root && (strings.HasPrefix(d.Name(), ".") || skipDirs[d.Name()] || d.Name() == "exocortex" || strings.Count(rel, string(filepath.Separator)) >= 3) {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || path == p.Path {
			return nil
		}
		top := filepath.Dir(path) == root
		switch ext := filepath.Ext(path); {
		case ext == ".py" || ext == ".go":
			out = append(out, path)
		case top && !discover.Skipped(d.Name()):
			out = append(out, path)
		}
		return nil
	})
	return out
}

// FindPromptText searches the plugins' executables and the sources beside them
// for the opening text of every prompt that carries a signal, built-in or
// override (an override carries its built-in prompt's signal). A file that
// cannot be read is left out and its error returned with the hits found.
func FindPromptText(plugins []Plugin, prompts []Prompt) ([]PromptText, error) {
	signalOf := map[string]string{}
	for _, p := range prompts {
		if p.Builtin && p.Signal != "" {
			signalOf[p.File] = p.Signal
		}
	}
	type want struct {
		prompt, signal, text string
		// source: a phrase other than the opening, looked for only in source
		// files: a Go executable holds the signals' descriptions (package
		// signals), whose words a later phrase may share.
		source bool
		// quoted: a short phrase, matched only as a whole string literal in
		// a source file.
		quoted bool
	}
	var wants []want
	for _, p := range prompts {
		sig := p.Signal
		if sig == "" {
			sig = signalOf[p.File]
		}
		if sig == "" {
			continue
		}
		if n := needle(p.Opening, needleMax); n != "" {
			wants = append(wants, want{p.Source, sig, n, false, false})
		}
		for _, ph := range p.Phrases {
			switch n := needle(ph, needleMax); {
			case ph == strings.Trim(p.Opening, phraseTrim) && n != "":
				// the opening, wanted above
			case n != "":
				wants = append(wants, want{p.Source, sig, n, true, false})
			case len(ph) >= quotedMin && strings.ContainsRune(ph, ' '):
				wants = append(wants, want{p.Source, sig, ph, true, true})
			}
		}
	}
	// Two prompts that open alike ("The agent stopped ...") are told apart by
	// more of their text.
	signalsOf := map[string]map[string]bool{}
	for _, w := range wants {
		if signalsOf[w.text] == nil {
			signalsOf[w.text] = map[string]bool{}
		}
		signalsOf[w.text][w.signal] = true
	}
	for i, w := range wants {
		if len(signalsOf[w.text]) > 1 {
			wants[i].text = ""
			for _, p := range prompts {
				if p.Source == w.prompt && !w.source && w.text == needle(p.Opening, needleMax) {
					wants[i].text = needle(p.Opening, 2*needleMax)
				}
			}
		}
	}
	// A phrase two signals' prompts share tells neither apart: left out.
	wants = slices.DeleteFunc(wants, func(w want) bool { return w.text == "" })
	if len(wants) == 0 {
		return nil, nil
	}
	var out []PromptText
	var errs []error
	for _, p := range plugins {
		var names []string
		for _, e := range p.Manifest.GetExtensions() {
			names = append(names, e.GetName())
		}
		slices.Sort(names)
		names = slices.Compact(names)
		for _, file := range pluginFiles(p) {
			if info, err := os.Stat(file); err != nil || info.Size() > maxScanned {
				continue
			}
			data, err := os.ReadFile(file)
			if err != nil {
				errs = append(errs, fmt.Errorf("reading plugin %s's %s: %w", p.Name, file, err))
				continue
			}
			seen := map[string]bool{}
			source := strings.HasSuffix(file, ".py") || strings.HasSuffix(file, ".go")
			for _, w := range wants {
				if seen[w.signal] || (w.source && !source) {
					continue
				}
				i := bytes.Index(data, []byte(w.text))
				if w.quoted {
					i = quotedIndex(data, w.text)
				}
				if i < 0 {
					continue
				}
				seen[w.signal] = true
				ext := nearestName(data[:i], names)
				if ext == "" && len(names) == 1 {
					ext = names[0]
				}
				out = append(out, PromptText{Plugin: p.Name, File: file, Extension: ext, Prompt: w.prompt, Signal: w.signal, Text: w.text})
			}
		}
	}
	return out, errors.Join(errs...)
}

// quotedIndex is the index of text in data where it is a whole string literal
// of Python or Go source ("text", 'text', `text`, or with the prompt's spaces
// or quote kept at its end: "text ", "text \""), or -1.
func quotedIndex(data []byte, text string) int {
	for off := 0; ; {
		i := bytes.Index(data[off:], []byte(text))
		if i < 0 {
			return -1
		}
		i += off
		off = i + 1
		if i == 0 || !bytes.ContainsAny(data[i-1:i], "\"'`") {
			continue
		}
		after := bytes.TrimLeft(data[i+len(text):], " ")
		after = bytes.TrimPrefix(after, []byte{'\\'})
		if len(after) > 0 && bytes.ContainsAny(after[:1], "\"'`") {
			return i
		}
	}
}

// nearestName returns the extension name quoted last in before ("name" or
// 'name'), the declaration a source file puts above the code that matches.
func nearestName(before []byte, names []string) string {
	best, at := "", -1
	for _, n := range names {
		for _, q := range []string{`"` + n + `"`, `'` + n + `'`} {
			if i := bytes.LastIndex(before, []byte(q)); i > at {
				best, at = n, i
			}
		}
	}
	return best
}

// promptText reports plugins that recognise a core message by its text
// (rule 1, seam 1: EXO017).
func (c *checker) promptText() {
	constOf := map[string]string{}
	for _, s := range c.in.Signals {
		constOf[s.Value] = s.Name
	}
	for _, t := range c.in.PromptText {
		use := "signals." + constOf[t.Signal]
		compare := "msg.Signal == " + use
		if strings.HasSuffix(t.File, ".py") {
			use = "signals." + strings.ToUpper(t.Signal)
			compare = "msg.signal == " + use
		}
		if constOf[t.Signal] == "" {
			use, compare = fmt.Sprintf("the signal %q", t.Signal), fmt.Sprintf("the message's signal with %q", t.Signal)
		}
		who := "plugin " + t.Plugin
		if t.Extension != "" {
			who += " (extension " + t.Extension + ")"
		}
		c.add(Finding{Code: "EXO017", Severity: Error, Plugin: t.Plugin, Extension: t.Extension, File: t.File,
			Message: fmt.Sprintf("%s holds %q, the opening of prompt %s, in %s: it recognises the core's message by its wording, which stops matching when the prompt is reworded or overridden; the message carries signal %q", who, t.Text, t.Prompt, t.File, t.Signal),
			Fix:     fmt.Sprintf("compare %s (%s) instead of the text", compare, use)})
	}
}
