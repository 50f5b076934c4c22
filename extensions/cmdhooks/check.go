package cmdhooks

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// interpreters run the script named after them.
var interpreters = map[string]bool{"sh": true, "bash": true, "zsh": true, "python": true, "python3": true, "node": true, "bun": true, "deno": true, "ruby": true, "perl": true}

// Check finds, without running it, why h's command could not run: a script
// that does not exist or is not executable, a program not on PATH. It
// expands what the shell would ($CLAUDE_PROJECT_DIR, $GEMINI_PROJECT_DIR,
// ~) with project as the project directory. "" means nothing was found
// wrong (the command may still fail when it runs; that is reported then).
func Check(h Hook, project string) string { return CheckEnv(h, project, os.Getenv) }

// CheckEnv is Check with the other variables read by getenv (the hooks'
// environment, Bridge.Environ, rather than this process's).
func CheckEnv(h Hook, project string, getenv func(string) string) string {
	words := strings.Fields(h.Command)
	if len(words) == 0 {
		return "the command is empty"
	}
	expand := func(w string) string {
		w = strings.Trim(w, `"'`)
		w = os.Expand(w, func(k string) string {
			switch k {
			case "CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR", "EXOCORTEX_PROJECT":
				return project
			}
			return getenv(k)
		})
		if rest, ok := strings.CutPrefix(w, "~/"); ok {
			if home, err := os.UserHomeDir(); err == nil {
				w = filepath.Join(home, rest)
			}
		}
		if w != "" && !filepath.IsAbs(w) && strings.Contains(w, "/") {
			w = filepath.Join(project, w)
		}
		return w
	}
	first := expand(words[0])
	if strings.ContainsAny(words[0], "|;&<>()`") {
		return "" // shell syntax: left to the shell
	}
	if strings.Contains(first, "/") {
		return checkFile(first, true)
	}
	if _, err := exec.LookPath(first); err != nil {
		return fmt.Sprintf("%s is not on PATH", first)
	}
	if interpreters[filepath.Base(first)] && len(words) > 1 && !strings.HasPrefix(words[1], "-") {
		if s := expand(words[1]); strings.Contains(s, "/") || strings.Contains(filepath.Base(s), ".") {
			if !filepath.IsAbs(s) {
				s = filepath.Join(project, s)
			}
			return checkFile(s, false)
		}
	}
	return ""
}

func checkFile(path string, mustExec bool) string {
	st, err := os.Stat(path)
	switch {
	case err != nil:
		return fmt.Sprintf("%s does not exist", path)
	case st.IsDir():
		return fmt.Sprintf("%s is a directory", path)
	case mustExec && st.Mode()&0o111 == 0:
		return fmt.Sprintf("%s is not executable (chmod +x %s)", path, path)
	}
	return ""
}
