package htn

import (
	"regexp"
	"strings"

	"github.com/exocortex/exocortex/extensions/internal/textfacts"
)

// The belief tracker's domain is a count of cue words, and a single
// incidental one decides it ("test" in a cricket match, "python" the snake,
// "package" a parcel, "build" a treehouse): a plan of steps with
// code_execution and text_editor on such a message tells the model to change
// code for a task that has none. So a plan is shown only when the message
// itself is about what the plan is for: it names one of the plan's anchors
// (a cue word, `prefix*`, or a phrase), or, for the plans of work on software
// and systems, holds something only such work has (a file name with a code
// extension, a path, a call, an identifier, a command-line flag, text in
// backticks).

// anchors are, by domain, the words that make a message that plan's task.
var anchors = map[string][]string{
	"debugging": {"error", "errors", "exception*", "traceback*", "stack trace", "crash*", "segfault*", "panic*",
		"bug", "bugs", "buggy", "debug*", "build fails", "build failed", "build is failing", "tests fail", "test fails",
		"failing test*", "compile error*", "not compiling", "doesn't compile", "exit code", "stderr"},
	"coding": {"code", "coding", "codebase", "source code", "refactor*", "implement*", "compil*", "repo", "repos",
		"repository", "commit*", "pull request*", "unit test*", "the tests", "golang", "javascript", "typescript",
		"python script", "python code", "a script", "the script", "function that", "api endpoint*",
		"endpoint*", "sdk", "cli", "program that", "a program"},
	"investigation": {"investigat*", "diagnos*", "root cause", "look into", "find out why", "figure out why", "logs", "log file*"},
	"research": {"research*", "paper*", "sources", "literature", "citation*", "cite", "state of the art", "survey*",
		"studies", "study on", "references"},
	"analysis": {"data", "dataset*", "csv", "spreadsheet*", "statistic*", "metric*", "benchmark*", "chart*", "plot*",
		"correlat*", "regression"},
	"operations": {"deploy*", "server*", "docker*", "container*", "kubernetes", "k8s", "systemd", "nginx", "ssh",
		"service*", "daemon*", "cron*", "firewall*", "config file*", "configuration file*", "vm", "vps", "database",
		"postgres*", "mysql", "redis"},
}

// technical are the domains whose plans are work on software or systems.
var technical = map[string]bool{"debugging": true, "coding": true, "investigation": true, "analysis": true, "operations": true}

// techRE matches what only a message about software or systems holds.
var techRE = regexp.MustCompile("`[^`]+`" + // text in backticks
	`|\b[\w.-]+\.(?:go|py|js|mjs|ts|tsx|jsx|rs|java|kt|c|h|cc|cpp|hpp|cs|rb|php|sh|bash|ps1|yaml|yml|json|toml|sql|html|css|csv|ini|conf|cfg|lock|mod|proto|tf|ipynb)\b` + // file names
	`|(?:^|\s)~?\.{0,2}/[\w.-]+/[\w./-]*` + // paths
	`|\b[A-Za-z_]\w*\([^()]*\)` + // calls
	`|\b[a-z][a-z0-9]*_[a-z0-9_]+\b|\b[a-z]+[A-Z][A-Za-z0-9]*\b` + // snake_case, camelCase
	`|(?:^|\s)--?[a-z][\w-]*` + // flags
	`|\b(?:git|npm|npx|pip3?|cargo|kubectl|pytest|yarn|gcc|mvn|gradle)\s+[a-z-]+\b` + // commands
	`|\bgo\s+(?:build|test|run|mod|get|vet|install)\b|\bmake\s+(?:test|build|install|clean|check|lint)\b` +
	`|\bdocker\s+(?:run|build|compose|ps|exec|pull|push)\b|\bpython3?\s+\S+\.py\b`)

// isAbout says whether the operator's message text is the task of domain's plan.
func isAbout(domain, text string) bool {
	if technical[domain] && techRE.MatchString(text) {
		return true
	}
	words := textfacts.Words(text)
	joined := " " + strings.Join(words, " ") + " "
	for _, a := range anchors[domain] {
		switch {
		case strings.Contains(a, " "):
			if strings.Contains(joined, " "+strings.Join(textfacts.Words(a), " ")+" ") {
				return true
			}
		case strings.HasSuffix(a, "*"):
			p := strings.TrimSuffix(a, "*")
			for _, w := range words {
				if strings.HasPrefix(w, p) {
					return true
				}
			}
		default:
			for _, w := range words {
				if w == a {
					return true
				}
			}
		}
	}
	return false
}
