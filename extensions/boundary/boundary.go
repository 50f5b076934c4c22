// Package boundary is the action boundary: every tool call is classified into a
// tier before it runs, and tier 4, destructive or out of bounds, waits for the
// operator.
//
// Action boundary (tool_execute_before, order 15, as in the seed). A tier-4 call
// is blocked with needs_approval and the exact command as its action: the loop
// asks the operator (allow once, allow for the session, deny) and runs the call
// only when allowed. While it waits, action_gate_active is set, so the supervisor
// does not take the wait for a stall; error comprehension clears it on the next
// successful tool output, and the boundary itself clears it when a later call
// passes without needing approval (the seed's "False on pass").
//
// # Tiers
//
//	1  read only: ls, cat, grep, find, git status/log/diff, text_editor read, ...
//	2  local changes inside the work directory: editing, building, scripts (the
//	   default for anything not listed)
//	3  notable but recoverable: package installs, network transfers (curl, wget,
//	   ssh, scp), git push, git reset --hard, killing processes, services, docker
//	4  destructive or out of bounds (blocked until the operator approves):
//	   - rm -r of /, of the work directory or a directory above it, of * at its
//	     top, or of anything outside the bounds
//	   - any write, move, copy target, redirection or delete outside the bounds
//	     (the work directory, the editor roots, the temporary directory)
//	   - mkfs, fdisk, parted, wipefs, shred; dd of=/dev/...; output redirected to
//	     a disk device (/dev/sd*, /dev/nvme*, ...)
//	   - git push --force (-f, --force-with-lease), git clean -x
//	   - a download piped into a shell or interpreter (curl ... | sh)
//	   - sudo, su, doas (privileges beyond the agent's)
//	   - shutdown, reboot, halt, poweroff; kill -9 -1; a fork bomb
//	   - recursive chmod or chown outside the work directory
//	   - text_editor write or patch outside the editor roots
//	   - Python or Node code that deletes or writes a literal absolute path
//	     outside the bounds, or passes a tier-4 command to a shell
//
// Where the machine cannot sandbox the agent's processes (Bounds.NoSandbox),
// every call of code_execution, data_analyze and data_visualize is tier 4 and
// asked for whatever the approval mode: the classifier asks, the sandbox
// (package sandbox) enforces, and without the sandbox only the operator can.
//
// Relative paths are taken from the work directory, after any cd earlier on the
// same line; a shell session that changed directory in an earlier call is not
// followed (the rule errs towards the configured work directory).
package boundary

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/exocortex/exocortex/extensions/internal/shellparse"
	"github.com/exocortex/exocortex/extensions/internal/turn"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

// Bounds are where the agent may change things.
type Bounds struct {
	// WorkDir is code_execution's working directory.
	WorkDir string
	// Roots are text_editor's roots.
	Roots []string
	// Scratch holds the sessions' scratch directories (tools.sandbox.scratch_dir);
	// the rest of the temporary directory is outside, as the sandbox has it.
	Scratch string
	// NoSandbox, when set, says why the machine cannot sandbox the agent's
	// processes: every call that runs one is then held for the operator,
	// whatever the approval mode (docs/sandbox.md).
	NoSandbox string
	// Unconfined, when set, finds NoSandbox only for the calls that run a
	// process (finding out starts a process, which other calls need not wait
	// for).
	Unconfined func() string
	// Home is the user's home directory, for ~ (os.UserHomeDir when empty).
	Home string
}

// Verdict is a call's classification.
type Verdict struct {
	Tier int
	// Rule says which rule decided it.
	Rule string
	// Action is what the operator is shown: the exact command or edit.
	Action string
}

func (b Bounds) withDefaults() Bounds {
	if b.Scratch == "" {
		b.Scratch = filepath.Join(os.TempDir(), "exocortex-scratch")
	}
	if b.Home == "" {
		b.Home, _ = os.UserHomeDir()
	}
	if b.WorkDir == "" && len(b.Roots) > 0 {
		b.WorkDir = b.Roots[0]
	}
	return b
}

// inside reports whether p (absolute, clean) lies in one of the bounds.
func (b Bounds) inside(p string) bool {
	for _, d := range append([]string{b.WorkDir, b.Scratch}, b.Roots...) {
		if d == "" {
			continue
		}
		d = filepath.Clean(d)
		if p == d || strings.HasPrefix(p, d+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// resolve makes an argument an absolute, clean path from dir.
func (b Bounds) resolve(arg, dir string) string {
	switch {
	case arg == "~" || strings.HasPrefix(arg, "~/"):
		arg = filepath.Join(b.Home, strings.TrimPrefix(arg, "~"))
	case strings.HasPrefix(arg, "$HOME"), strings.HasPrefix(arg, "${HOME}"):
		arg = filepath.Join(b.Home, strings.TrimPrefix(strings.TrimPrefix(arg, "${HOME}"), "$HOME"))
	}
	if !filepath.IsAbs(arg) {
		arg = filepath.Join(dir, arg)
	}
	return filepath.Clean(arg)
}

// harmlessDevices may be written to.
var harmlessDevices = map[string]bool{"/dev/null": true, "/dev/stdout": true, "/dev/stderr": true, "/dev/tty": true}

var (
	forkBombRE = regexp.MustCompile(`:\s*\(\s*\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:`)
	diskDevRE  = regexp.MustCompile(`^/dev/(sd|hd|vd|xvd|nvme|mmcblk|disk|md|dm-)`)
)

var (
	readOnly = set("ls", "cat", "head", "tail", "less", "more", "grep", "egrep", "fgrep", "rg", "ag", "find", "wc", "pwd", "echo", "printf",
		"which", "whereis", "type", "file", "stat", "du", "df", "ps", "top", "env", "printenv", "date", "uname", "whoami", "id",
		"tree", "sort", "uniq", "cut", "awk", "diff", "cmp", "md5sum", "sha256sum", "true", "false", "test", "[", "jq", "basename", "dirname", "realpath", "readlink", "hostname", "uptime", "free")
	installers = map[string][]string{"pip": {"install"}, "pip3": {"install"}, "npm": {"install", "i", "add"}, "yarn": {"add", "install"}, "pnpm": {"add", "install"},
		"apt": {"install", "remove", "purge"}, "apt-get": {"install", "remove", "purge"}, "yum": {"install", "remove"}, "dnf": {"install", "remove"},
		"brew": {"install", "uninstall"}, "go": {"install", "get"}, "cargo": {"install"}, "gem": {"install"}, "conda": {"install", "remove"}}
	network     = set("curl", "wget", "ssh", "scp", "rsync", "sftp", "ftp", "nc", "netcat", "telnet")
	interpreter = set("sh", "bash", "zsh", "dash", "ksh", "fish", "python", "python3", "perl", "ruby", "node", "php")
	wrappers    = set("nohup", "time", "command", "builtin", "exec", "nice", "ionice", "timeout", "xargs", "stdbuf")
	privileged  = set("sudo", "su", "doas", "pkexec")
	powerCmds   = set("shutdown", "reboot", "halt", "poweroff")
	diskTools   = set("fdisk", "sfdisk", "parted", "gdisk", "wipefs", "shred", "mkswap")
	writers     = set("cp", "mv", "install", "ln", "rsync") // the last argument is written
	touchers    = set("touch", "mkdir", "rmdir", "truncate", "unlink")
)

func set(xs ...string) map[string]bool {
	m := map[string]bool{}
	for _, x := range xs {
		m[x] = true
	}
	return m
}

// ClassifyShell classifies a shell text.
func (b Bounds) ClassifyShell(text string) Verdict {
	b = b.withDefaults()
	v := Verdict{Tier: 1, Rule: "read-only commands", Action: strings.TrimSpace(text)}
	raise := func(tier int, rule string) {
		if tier > v.Tier {
			v.Tier, v.Rule = tier, rule
		}
	}
	if forkBombRE.MatchString(text) {
		raise(4, "a fork bomb")
	}
	cmds := shellparse.Parse(text)
	if len(cmds) == 0 {
		return v
	}
	dir := b.WorkDir
	prevFetch := false
	for _, c := range cmds {
		words := c.Words
		// Strip variable assignments and wrappers; note privilege escalation.
		for len(words) > 0 {
			w := filepath.Base(words[0])
			switch {
			case privileged[w]:
				raise(4, w+" (privileges beyond the agent's)")
				words = words[1:]
				for len(words) > 0 && strings.HasPrefix(words[0], "-") {
					words = words[1:]
				}
				continue
			case wrappers[w] || w == "env":
				words = words[1:]
				for len(words) > 0 && (strings.HasPrefix(words[0], "-") || shellparse.IsDigits(words[0])) {
					words = words[1:]
				}
				continue
			case strings.Contains(words[0], "=") && !strings.HasPrefix(words[0], "="):
				words = words[1:]
				continue
			}
			break
		}
		for _, r := range c.Redirects {
			p := b.resolve(r, dir)
			switch {
			case harmlessDevices[p]:
			case diskDevRE.MatchString(p):
				raise(4, "output redirected to the disk device "+p)
			case !b.inside(p):
				raise(4, "writes "+p+", outside the work directory and roots")
			default:
				raise(2, "writes a file in the work directory")
			}
		}
		if len(words) == 0 {
			continue
		}
		name := filepath.Base(words[0])
		args := words[1:]
		if prevFetch && interpreter[name] {
			raise(4, "a download piped into "+name)
		}
		prevFetch = c.PipeOut && (name == "curl" || name == "wget" || prevFetch && c.PipeOut)
		switch {
		case name == "cd":
			if len(args) > 0 {
				dir = b.resolve(args[0], dir)
			} else {
				dir = b.Home
			}
		case name == "rm":
			b.classifyRm(args, dir, raise)
		case strings.HasPrefix(name, "mkfs"), diskTools[name]:
			raise(4, name+" (destroys a file system or disk)")
		case name == "dd":
			for _, a := range args {
				if strings.HasPrefix(a, "of=") {
					p := b.resolve(strings.TrimPrefix(a, "of="), dir)
					if strings.HasPrefix(p, "/dev/") && !harmlessDevices[p] {
						raise(4, "dd writing to the device "+p)
					} else if !b.inside(p) {
						raise(4, "dd writing "+p+", outside the bounds")
					} else {
						raise(2, "dd writing a file")
					}
				}
			}
		case powerCmds[name], name == "init" && len(args) > 0 && (args[0] == "0" || args[0] == "6"),
			name == "systemctl" && len(args) > 0 && powerCmds[args[0]]:
			raise(4, name+" (stops the machine)")
		case name == "kill" && contains(args, "-1"):
			raise(4, "kill -1 (every process)")
		case name == "git":
			b.classifyGit(args, raise)
		case name == "chmod" || name == "chown" || name == "chgrp":
			rec := false
			for _, a := range args {
				if a == "-R" || a == "--recursive" || strings.HasPrefix(a, "-") && strings.Contains(a, "R") {
					rec = true
				}
			}
			targets := nonFlags(args)
			if len(targets) > 0 {
				targets = targets[1:] // the mode or owner
			}
			for _, a := range targets {
				if p := b.resolve(a, dir); !b.inside(p) {
					if rec {
						raise(4, "recursive "+name+" of "+p+", outside the work directory")
					} else {
						raise(4, name+" of "+p+", outside the bounds")
					}
				}
			}
			raise(2, name+" inside the work directory")
		case writers[name]:
			if nf := nonFlags(args); len(nf) >= 2 {
				if p := b.resolve(nf[len(nf)-1], dir); !b.inside(p) {
					raise(4, name+" into "+p+", outside the bounds")
				}
				if name == "mv" {
					for _, a := range nf[:len(nf)-1] {
						if p := b.resolve(a, dir); !b.inside(p) {
							raise(4, "mv of "+p+", outside the bounds")
						}
					}
				}
			}
			if name == "rsync" {
				raise(3, "rsync (may transfer over the network)")
			}
			raise(2, name+" inside the work directory")
		case touchers[name] || name == "tee" || name == "sed" && hasInPlace(args):
			for _, a := range nonFlags(args) {
				if name == "sed" && !strings.ContainsAny(a, "/.") {
					continue
				}
				if p := b.resolve(a, dir); !b.inside(p) && !harmlessDevices[p] {
					raise(4, name+" of "+p+", outside the bounds")
				}
			}
			raise(2, name+" inside the work directory")
		case installers[name] != nil && len(args) > 0 && contains(installers[name], args[0]):
			raise(3, name+" "+args[0]+" (installs software)")
		case network[name]:
			raise(3, name+" (network transfer)")
		case name == "kill" || name == "pkill" || name == "killall" || name == "systemctl" || name == "service" || name == "docker" || name == "crontab":
			raise(3, name+" (affects processes or services)")
		case name == "find" && (contains(args, "-delete") || contains(args, "-exec")):
			raise(2, "find that deletes or runs commands")
			if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
				if p := b.resolve(args[0], dir); !b.inside(p) && contains(args, "-delete") {
					raise(4, "find -delete in "+p+", outside the bounds")
				}
			}
		case readOnly[name]:
		default:
			raise(2, name+" (may change files in the work directory)")
		}
	}
	return v
}

func (b Bounds) classifyRm(args []string, dir string, raise func(int, string)) {
	rec := false
	for _, a := range args {
		if a == "--recursive" || strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsAny(a, "rR") {
			rec = true
		}
	}
	for _, a := range nonFlags(args) {
		p := b.resolve(a, dir)
		top := filepath.Base(a) == "*" && filepath.Clean(b.resolve(filepath.Dir(a), dir)) == filepath.Clean(b.WorkDir)
		switch {
		case p == "/":
			raise(4, "rm of /")
		case !b.inside(p):
			raise(4, "rm of "+p+", outside the work directory and roots")
		case rec && (p == filepath.Clean(b.WorkDir) || strings.HasPrefix(filepath.Clean(b.WorkDir), p+string(filepath.Separator)) || top):
			raise(4, "rm -r of the whole work directory ("+p+")")
		}
	}
	raise(2, "rm inside the work directory")
}

func (b Bounds) classifyGit(args []string, raise func(int, string)) {
	sub := ""
	for i := 0; i < len(args); i++ {
		if a := args[i]; !strings.HasPrefix(a, "-") {
			sub, args = a, args[i+1:]
			break
		} else if a == "-C" || a == "-c" {
			i++
		}
	}
	switch sub {
	case "status", "log", "diff", "show", "branch", "remote", "rev-parse", "ls-files", "blame", "describe", "tag", "config", "grep", "fetch":
		if sub == "fetch" {
			raise(3, "git fetch (network)")
		}
	case "push":
		for _, a := range args {
			if a == "-f" || a == "--force" || strings.HasPrefix(a, "--force-with-lease") || strings.HasPrefix(a, "+") {
				raise(4, "git push --force (rewrites the remote's history)")
			}
		}
		raise(3, "git push (publishes)")
	case "clean":
		for _, a := range args {
			if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "x") {
				raise(4, "git clean -x (deletes untracked and ignored files for good)")
			}
		}
		raise(3, "git clean (deletes untracked files)")
	case "reset":
		if contains(args, "--hard") {
			raise(3, "git reset --hard (drops uncommitted changes)")
		}
		raise(2, "git reset")
	default:
		raise(2, "git "+sub)
	}
}

func hasInPlace(args []string) bool {
	for _, a := range args {
		if a == "-i" || strings.HasPrefix(a, "-i") || a == "--in-place" {
			return true
		}
	}
	return false
}

// Written is a path a shell command writes, and how (shellparse.Written).
type Written = shellparse.Written

// WrittenPaths lists the paths a shell text writes (shellparse.WrittenPaths).
func WrittenPaths(text string) []Written { return shellparse.WrittenPaths(text) }

func nonFlags(args []string) []string {
	var out []string
	for _, a := range args {
		if !strings.HasPrefix(a, "-") || a == "-" {
			out = append(out, a)
		}
	}
	return out
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

var (
	strLitRE    = regexp.MustCompile(`(?:"((?:[^"\\\n]|\\.)*)"|'((?:[^'\\\n]|\\.)*)')`)
	scriptWrite = regexp.MustCompile(`(?i)rmtree|os\.remove|os\.unlink|\.unlink\(|os\.rmdir|removedirs|\.write_text|\.write_bytes|open\([^)]*['"][wax+]|os\.rename|shutil\.(move|copy)|fs\.(rm|unlink|rename)|writeFile|appendFile|rmSync|unlinkSync|renameSync|rmdirSync|rimraf`)
	scriptShell = regexp.MustCompile(`(?:os\.system|subprocess\.\w+|os\.popen|execSync|exec|spawnSync)\(\s*(?:\[)?\s*(?:f)?("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')`)
)

// ClassifyScript classifies Python or Node code: deletes and writes of literal
// absolute paths outside the bounds, and shell commands it passes on.
func (b Bounds) ClassifyScript(code string) Verdict {
	b = b.withDefaults()
	v := Verdict{Tier: 2, Rule: "a script in the work directory", Action: strings.TrimSpace(code)}
	for _, m := range scriptShell.FindAllStringSubmatch(code, -1) {
		lit := m[1][1 : len(m[1])-1]
		if sv := b.ClassifyShell(lit); sv.Tier > v.Tier {
			v.Tier, v.Rule = sv.Tier, "runs a shell command: "+sv.Rule
		}
	}
	if scriptWrite.MatchString(code) {
		for _, m := range strLitRE.FindAllStringSubmatch(code, -1) {
			lit := m[1] + m[2]
			if !strings.HasPrefix(lit, "/") && !strings.HasPrefix(lit, "~/") {
				continue
			}
			p := b.resolve(lit, b.WorkDir)
			if !b.inside(p) && !harmlessDevices[p] && v.Tier < 4 {
				v.Tier, v.Rule = 4, "a script that deletes or writes files and names "+p+", outside the bounds"
			}
		}
	}
	return v
}

// Classify classifies a tool call.
func (b Bounds) Classify(tc *exocortexv1.ToolCall) Verdict {
	b = b.withDefaults()
	args := turn.ArgsMap(tc)
	switch tc.GetName() {
	case "code_execution":
		code, _ := turn.StringArg(args, "code", "command", "cmd", "script")
		runtime, _ := turn.StringArg(args, "runtime", "language", "lang")
		switch strings.ToLower(runtime) {
		case "python", "python3", "nodejs", "node", "javascript":
			return b.ClassifyScript(code)
		case "reset":
			return Verdict{Tier: 2, Rule: "resets a shell session", Action: "reset"}
		}
		return b.ClassifyShell(code)
	case "text_editor":
		action, _ := turn.StringArg(args, "action", "op", "command")
		path, _ := turn.StringArg(args, "path", "file", "file_path")
		a := strings.ToLower(action)
		if a == "read" || a == "view" || a == "show" || a == "cat" || a == "open" || a == "" {
			return Verdict{Tier: 1, Rule: "text_editor read", Action: "read " + path}
		}
		dir := b.WorkDir
		if len(b.Roots) > 0 {
			dir = b.Roots[0]
		}
		p := b.resolve(path, dir)
		inRoots := false
		for _, r := range b.Roots {
			r = filepath.Clean(r)
			if p == r || strings.HasPrefix(p, r+string(filepath.Separator)) {
				inRoots = true
			}
		}
		if len(b.Roots) > 0 && !inRoots {
			return Verdict{Tier: 4, Rule: "text_editor " + a + " of " + p + ", outside the editor roots", Action: fmt.Sprintf("text_editor %s %s", a, p)}
		}
		return Verdict{Tier: 2, Rule: "text_editor " + a + " inside the roots", Action: fmt.Sprintf("text_editor %s %s", a, p)}
	}
	return Verdict{Tier: 1, Rule: "tool without side effects on files", Action: tc.GetName() + " " + tc.GetArgsJson()}
}

// runsProcess names the tools that run a process for the agent.
var runsProcess = map[string]bool{"code_execution": true, "data_analyze": true, "data_visualize": true}

func gateKey() sdk.Key[*exocortexv1.ActionGate] { return sdk.KeyOf[*exocortexv1.ActionGate]() }

// Boundary is the action-boundary extension. Bounds gives the bounds (loaded
// from the configuration by the built-in plugin).
type Boundary struct {
	Bounds func() (Bounds, error)
}

// Spec declares it.
func (e Boundary) Spec() sdk.Spec {
	return sdk.Spec{
		Name:            "action_boundary",
		Hooks:           []sdk.Hook{sdk.ToolExecuteBefore(e)},
		Order:           15,
		Writes:          []sdk.KeyRef{gateKey()},
		Description:     "Classifies each tool call into tiers 1-4; holds tier 4 (destructive or out of bounds) for the operator and sets action_gate_active for the rest of the iteration.",
		EffectsDeclared: true,
	}
}

// ToolExecuteBefore classifies the call.
func (bd Boundary) ToolExecuteBefore(_ context.Context, c *sdk.Call, req *exocortexv1.ToolExecuteBeforeRequest) (*exocortexv1.ToolExecuteBeforeResponse, error) {
	var b Bounds
	if bd.Bounds != nil {
		var err error
		if b, err = bd.Bounds(); err != nil {
			return nil, fmt.Errorf("action_boundary: loading the bounds: %w", err)
		}
	}
	if b.NoSandbox == "" && b.Unconfined != nil && runsProcess[req.GetToolCall().GetName()] {
		b.NoSandbox = b.Unconfined()
	}
	v := b.Classify(req.GetToolCall())
	always := false
	if b.NoSandbox != "" && runsProcess[req.GetToolCall().GetName()] && v.Tier < 4 {
		v.Tier, v.Rule, always = 4, "no OS sandbox ("+b.NoSandbox+"): every command is asked for", true
		if v.Action == "" {
			v.Action = req.GetToolCall().GetName() + " " + req.GetToolCall().GetArgsJson()
		}
	} else if b.NoSandbox != "" && runsProcess[req.GetToolCall().GetName()] {
		always = true
	}
	if v.Tier < 4 {
		return nil, nil // the gate is iteration-scoped: nothing from an earlier call to clear
	}
	reason := "tier 4 (destructive or out of bounds): " + v.Rule
	gateKey().Set(c, &exocortexv1.ActionGate{Active: true, ToolName: req.GetToolCall().GetName(), Action: v.Action, Tier: 4, Reason: reason})
	c.Logger().Info("held for the operator", "tool", req.GetToolCall().GetName(), "rule", v.Rule)
	return &exocortexv1.ToolExecuteBeforeResponse{Block: &exocortexv1.ToolBlock{Reason: reason, NeedsApproval: true, Action: v.Action, AlwaysAsk: always}}, nil
}
