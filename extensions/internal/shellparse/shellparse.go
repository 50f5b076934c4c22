// Package shellparse splits shell text into simple commands and finds the paths
// a shell text writes. It is a library, not an extension: the action boundary
// (package boundary) classifies commands with it, and the reasoning extensions
// register the files a command produced with it, without importing each other.
package shellparse

import "strings"

// Command is one simple command of a shell line: its words (quotes removed,
// assignments and wrappers like sudo kept as words), the files it redirects
// output to, and whether its output is piped into the next command.
type Command struct {
	Words     []string
	Redirects []string
	PipeOut   bool
}

// Parse splits a shell text into simple commands at unquoted ; && || | & and
// newlines, and into words with the usual quoting ('…', "…", \x). Command
// substitutions ($(…) and `…`) are parsed as commands of their own. It is not a
// shell: it only needs to find the commands and their arguments reliably enough
// to classify them, and errs towards splitting.
func Parse(text string) []Command {
	var cmds []Command
	var cur Command
	var word strings.Builder
	inWord := false
	redirectNext := false
	endWord := func() {
		if !inWord {
			return
		}
		w := word.String()
		word.Reset()
		inWord = false
		if redirectNext {
			cur.Redirects = append(cur.Redirects, w)
			redirectNext = false
			return
		}
		cur.Words = append(cur.Words, w)
	}
	endCmd := func(pipe bool) {
		endWord()
		cur.PipeOut = pipe
		if len(cur.Words) > 0 || len(cur.Redirects) > 0 {
			cmds = append(cmds, cur)
		}
		cur = Command{}
		redirectNext = false
	}
	rs := []rune(text)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == '\\' && i+1 < len(rs):
			i++
			if rs[i] != '\n' {
				word.WriteRune(rs[i])
				inWord = true
			}
		case r == '\'':
			inWord = true
			for i++; i < len(rs) && rs[i] != '\''; i++ {
				word.WriteRune(rs[i])
			}
		case r == '"':
			inWord = true
			for i++; i < len(rs) && rs[i] != '"'; i++ {
				if rs[i] == '\\' && i+1 < len(rs) {
					i++
				}
				word.WriteRune(rs[i])
			}
		case r == '#' && !inWord:
			for i < len(rs) && rs[i] != '\n' {
				i++
			}
			endCmd(false)
		case r == ' ' || r == '\t':
			endWord()
		case r == '\n' || r == ';' || r == '(' || r == ')' || r == '`' || r == '{' && !inWord || r == '}' && !inWord:
			endCmd(false)
		case r == '$' && i+1 < len(rs) && rs[i+1] == '(':
			endCmd(false)
			i++
		case r == '&':
			if i+1 < len(rs) && rs[i+1] == '&' {
				i++
			} else if inWord && strings.HasSuffix(word.String(), ">") {
				word.WriteRune(r) // 2>&1
				continue
			}
			endCmd(false)
		case r == '|':
			if i+1 < len(rs) && rs[i+1] == '|' {
				i++
				endCmd(false)
			} else {
				endCmd(true)
			}
		case r == '>':
			// A descriptor number before > belongs to the redirection, not a word.
			if inWord && IsDigits(word.String()) {
				word.Reset()
				inWord = false
			} else {
				endWord()
			}
			if i+1 < len(rs) && rs[i+1] == '>' {
				i++
			}
			if i+1 < len(rs) && rs[i+1] == '&' { // >&2
				i++
				for i+1 < len(rs) && rs[i+1] >= '0' && rs[i+1] <= '9' {
					i++
				}
				continue
			}
			redirectNext = true
		case r == '<':
			endWord()
		default:
			word.WriteRune(r)
			inWord = true
		}
	}
	endCmd(false)
	return cmds
}

func IsDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// Written is a path a shell command writes, and how.
type Written struct {
	Path string
	// Action is "written", "created", "directory" or "deleted".
	Action string
}

// WrittenPaths lists the paths a shell text writes, creates or deletes, as
// written in the text (not resolved): output redirections, touch, mkdir, the
// destination of cp, mv, install and ln, tee's files, -o/--output arguments, and
// rm's arguments. Devices are left out.
func WrittenPaths(text string) []Written {
	var out []Written
	seen := map[string]bool{}
	add := func(p, action string) {
		if p == "" || strings.HasPrefix(p, "/dev/") || strings.HasPrefix(p, "-") || seen[p+action] {
			return
		}
		seen[p+action] = true
		out = append(out, Written{Path: p, Action: action})
	}
	for _, c := range Parse(text) {
		for _, r := range c.Redirects {
			add(r, "written")
		}
		words := c.Words
		for len(words) > 0 && (IsPrivileged(words[0]) || IsWrapper(words[0])) {
			words = words[1:]
		}
		if len(words) == 0 {
			continue
		}
		name, args := words[0], words[1:]
		for i, a := range args {
			if (a == "-o" || a == "--output") && i+1 < len(args) {
				add(args[i+1], "written")
			} else if strings.HasPrefix(a, "--output=") {
				add(strings.TrimPrefix(a, "--output="), "written")
			}
		}
		nf := NonFlags(args)
		switch name {
		case "touch":
			for _, a := range nf {
				add(a, "created")
			}
		case "mkdir":
			for _, a := range nf {
				add(a, "directory")
			}
		case "cp", "mv", "install", "ln":
			if len(nf) >= 2 {
				add(nf[len(nf)-1], "written")
			}
		case "tee":
			for _, a := range nf {
				add(a, "written")
			}
		case "rm":
			for _, a := range nf {
				add(a, "deleted")
			}
		}
	}
	return out
}

// IsWrapper reports whether a command word runs the command after it
// (nohup, time, timeout, xargs, ...).
func IsWrapper(w string) bool {
	switch w {
	case "nohup", "time", "command", "builtin", "exec", "nice", "ionice", "timeout", "xargs", "stdbuf":
		return true
	}
	return false
}

// IsPrivileged reports whether a command word escalates privileges (sudo, su, doas, pkexec).
func IsPrivileged(w string) bool {
	switch w {
	case "sudo", "su", "doas", "pkexec":
		return true
	}
	return false
}

// NonFlags returns the arguments that are not flags ("-" counts as a file).
func NonFlags(args []string) []string {
	var out []string
	for _, a := range args {
		if !strings.HasPrefix(a, "-") || a == "-" {
			out = append(out, a)
		}
	}
	return out
}
