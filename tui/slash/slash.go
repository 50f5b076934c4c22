// Package slash is the operator's command language in a terminal session:
// a line that starts with "/" names a command ("/memory search tea"), the
// table of commands with their help, and completion of command names,
// subcommands and arguments.
//
// The package knows no runtime: argument values that change while the session
// runs (session names, plugin names, files) come from a Values function the
// caller passes to Complete, keyed by the argument's Kind.
package slash

import (
	"fmt"
	"sort"
	"strings"
)

// Kinds of argument values, looked up through Values when completing.
const (
	KindSession = "session" // session names
	KindPlugin  = "plugin"  // plugin names
	KindModel   = "model"   // model names the server has
	KindFile    = "file"    // paths, relative to the working directory
	KindMode    = "mode"    // approval modes
)

// Sub is a fixed first argument of a command: a subcommand or a choice.
type Sub struct {
	Name    string
	Args    string // usage of what follows, e.g. "QUERY"
	Summary string
	// Kind, when set, completes the argument after the subcommand.
	Kind string
}

// Command is one slash command.
type Command struct {
	Name    string
	Aliases []string
	Args    string // usage, e.g. "[NAME]"
	Summary string
	Subs    []Sub
	// Kind, when set and the command has no Subs, completes its first argument.
	Kind string
}

// takesArgs reports whether anything may follow the name.
func (c Command) takesArgs() bool { return c.Args != "" || len(c.Subs) > 0 }

// needsArgs reports whether the usage has a required argument (one not in
// brackets).
func needsArgs(usage string) bool { return usage != "" && !strings.HasPrefix(usage, "[") }

// Registry is the set of commands, in the order given (the order of /help).
type Registry struct {
	cmds   []Command
	byName map[string]int
}

// New returns a registry of cmds. Duplicate names or aliases are a programming
// error and panic, so a bad table fails the first test that builds it.
func New(cmds ...Command) *Registry {
	r := &Registry{byName: map[string]int{}}
	for _, c := range cmds {
		for _, n := range append([]string{c.Name}, c.Aliases...) {
			if _, dup := r.byName[n]; dup {
				panic(fmt.Sprintf("slash: command name %q is used twice", n))
			}
			r.byName[n] = len(r.cmds)
		}
		r.cmds = append(r.cmds, c)
	}
	return r
}

// Commands returns the commands in table order.
func (r *Registry) Commands() []Command { return append([]Command(nil), r.cmds...) }

// Lookup finds a command by name or alias (without the slash).
func (r *Registry) Lookup(name string) (Command, bool) {
	i, ok := r.byName[strings.ToLower(name)]
	if !ok {
		return Command{}, false
	}
	return r.cmds[i], true
}

// Invocation is a parsed command line.
type Invocation struct {
	// Name is the command's canonical name (an alias is resolved).
	Name string
	// Args are the whitespace-separated words after the name.
	Args []string
	// Rest is the text after the name, trimmed, with its spacing kept (for
	// free text such as "/memory add ...").
	Rest string
}

// Arg returns argument i or "".
func (in Invocation) Arg(i int) string {
	if i < len(in.Args) {
		return in.Args[i]
	}
	return ""
}

// RestAfter returns the text after the first n words of Rest.
func (in Invocation) RestAfter(n int) string {
	s := in.Rest
	for range n {
		s = strings.TrimLeft(s, " \t")
		i := strings.IndexAny(s, " \t\n")
		if i < 0 {
			return ""
		}
		s = s[i:]
	}
	return strings.TrimSpace(s)
}

// IsCommand reports whether line is meant as a command: it starts with "/"
// followed by a letter. "/tmp/x is a path" is a command line too; "// note" and
// "/ 2" are not.
func IsCommand(line string) bool {
	if len(line) < 2 || line[0] != '/' {
		return false
	}
	c := line[1]
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

// Parse reads a command line. An unknown command is an error that suggests the
// nearest names.
func (r *Registry) Parse(line string) (Invocation, error) {
	line = strings.TrimSpace(line)
	if !IsCommand(line) {
		return Invocation{}, fmt.Errorf("%q is not a command: commands start with / (try /help)", line)
	}
	body := line[1:]
	name, rest, _ := strings.Cut(body, " ")
	if i := strings.IndexAny(name, "\t\n"); i >= 0 {
		name, rest = body[:i], body[i+1:]
	}
	c, ok := r.Lookup(name)
	if !ok {
		msg := fmt.Sprintf("unknown command /%s", name)
		if near := r.near(name); len(near) > 0 {
			msg += "; did you mean " + strings.Join(near, ", ") + "?"
		}
		return Invocation{}, fmt.Errorf("%s (/help lists them)", msg)
	}
	rest = strings.TrimSpace(rest)
	return Invocation{Name: c.Name, Args: strings.Fields(rest), Rest: rest}, nil
}

// near returns up to three command names that start like name or are a small
// edit away from it.
func (r *Registry) near(name string) []string {
	name = strings.ToLower(name)
	var out []string
	for _, c := range r.cmds {
		if strings.HasPrefix(c.Name, name) || strings.HasPrefix(name, c.Name) || distance(name, c.Name) <= 2 {
			out = append(out, "/"+c.Name)
		}
		if len(out) == 3 {
			break
		}
	}
	return out
}

// distance is the Levenshtein distance between a and b.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Candidate is one completion of the input line.
type Candidate struct {
	// Line is the whole input line after accepting the candidate.
	Line string
	// Label is what the menu shows, e.g. "/memory search QUERY".
	Label   string
	Summary string
	// Runnable is set when the line makes sense run as it is (no required
	// argument is missing), so Enter may run it at once.
	Runnable bool
}

// Values returns the possible values of an argument kind that may complete
// prefix (the word typed so far; for files, the directory part decides what
// to list); nil for none. Complete filters them by prefix itself.
type Values func(kind, prefix string) []string

// Complete returns the completions of line, best first. Names match by prefix,
// or by substring when no name has the prefix; an exact, complete entry is still offered (so the menu
// shows its help) but sorts first.
func (r *Registry) Complete(line string, values Values) []Candidate {
	if !strings.HasPrefix(line, "/") {
		return nil
	}
	body := line[1:]
	name, rest, hasSpace := strings.Cut(body, " ")
	if !hasSpace {
		return r.completeName(name)
	}
	c, ok := r.Lookup(name)
	if !ok {
		return nil
	}
	head := "/" + name + " "
	if len(c.Subs) > 0 {
		sub, after, subDone := strings.Cut(strings.TrimLeft(rest, " "), " ")
		if !subDone {
			var out []Candidate
			for _, s := range matchNames(sub, subNames(c.Subs)) {
				sc := c.Subs[indexSub(c.Subs, s)]
				line := head + sc.Name
				if sc.Args != "" || sc.Kind != "" {
					line += " "
				}
				out = append(out, Candidate{Line: line, Label: "/" + c.Name + " " + sc.Name + " " + sc.Args, Summary: sc.Summary, Runnable: !needsArgs(sc.Args)})
			}
			return out
		}
		i := indexSub(c.Subs, sub)
		if i < 0 || c.Subs[i].Kind == "" {
			return nil
		}
		return completeValue(head+sub+" ", after, c.Subs[i].Kind, values)
	}
	if c.Kind == "" {
		return nil
	}
	return completeValue(head, strings.TrimLeft(rest, " "), c.Kind, values)
}

func (r *Registry) completeName(prefix string) []Candidate {
	var names []string
	for _, c := range r.cmds {
		names = append(names, c.Name)
	}
	var out []Candidate
	for _, n := range matchNames(prefix, names) {
		c, _ := r.Lookup(n)
		line := "/" + c.Name
		if c.takesArgs() {
			line += " "
		}
		out = append(out, Candidate{Line: line, Label: strings.TrimSpace("/" + c.Name + " " + c.Args), Summary: c.Summary, Runnable: !needsArgs(c.Args)})
	}
	return out
}

// completeValue completes the last word of arg, which follows head.
func completeValue(head, arg, kind string, values Values) []Candidate {
	if values == nil || strings.ContainsAny(arg, " \t") {
		return nil
	}
	var out []Candidate
	for _, v := range matchNames(arg, values(kind, arg)) {
		out = append(out, Candidate{Line: head + v, Label: v, Runnable: true})
	}
	return out
}

// matchNames returns the names that start with prefix (in their order), or,
// when none does, those that contain it, case-insensitively.
func matchNames(prefix string, names []string) []string {
	p := strings.ToLower(prefix)
	var starts, contains []string
	for _, n := range names {
		ln := strings.ToLower(n)
		switch {
		case strings.HasPrefix(ln, p):
			starts = append(starts, n)
		case p != "" && strings.Contains(ln, p):
			contains = append(contains, n)
		}
	}
	sort.SliceStable(starts, func(i, j int) bool {
		// The exact match first, so Enter on a complete name runs it.
		return strings.EqualFold(starts[i], prefix) && !strings.EqualFold(starts[j], prefix)
	})
	if len(starts) > 0 {
		return starts
	}
	return contains
}

func subNames(subs []Sub) []string {
	out := make([]string, len(subs))
	for i, s := range subs {
		out[i] = s.Name
	}
	return out
}

func indexSub(subs []Sub, name string) int {
	for i, s := range subs {
		if strings.EqualFold(s.Name, name) {
			return i
		}
	}
	return -1
}

// Row is one line of the command table: the usage and what it does.
type Row struct{ Usage, Summary string }

// Rows returns the command table: one row per command, and one per
// subcommand (indented).
func (r *Registry) Rows() []Row {
	var rows []Row
	for _, c := range r.cmds {
		rows = append(rows, Row{strings.TrimSpace("/" + c.Name + " " + c.Args), c.Summary})
		for _, s := range c.Subs {
			rows = append(rows, Row{strings.TrimSpace("  /" + c.Name + " " + s.Name + " " + s.Args), s.Summary})
		}
	}
	return rows
}

// Help renders the command table, aligned.
func (r *Registry) Help() string {
	rows := r.Rows()
	width := 0
	for _, rw := range rows {
		width = max(width, len(rw.Usage))
	}
	var b strings.Builder
	for _, rw := range rows {
		fmt.Fprintf(&b, "%-*s  %s\n", width, rw.Usage, rw.Summary)
	}
	return strings.TrimRight(b.String(), "\n")
}
