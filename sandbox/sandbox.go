// Package sandbox confines the processes Exocortex runs for the agent
// (code_execution's shells, the data tools' scripts, the operator's !commands)
// with the kernel, not with a reading of the command text: whatever a command is
// spelled like, it can write only inside the allowed roots, cannot read the
// configured secrets, has no network when that is turned off, and dies with
// everything it started when its process ends.
//
// # How
//
// A command is started through a launcher: the running executable re-executed
// with LauncherArg as its first argument (Wrap rewrites an exec.Cmd into that
// form, and the program's main calls Launch first thing). The kernel starts the
// launcher in new namespaces (user, mount, PID, and network when it is off); the
// launcher, before it executes the command:
//
//  1. makes its mount tree private and hides each secret: an empty read-only
//     tmpfs over a directory, /dev/null over a file; mounts a /proc of its own
//     PID namespace and a private /dev/shm;
//  2. restricts itself with Landlock: read and execute everywhere, write only
//     beneath the roots (and /dev/null and friends, and its private /dev/shm);
//     processes cannot signal or reach abstract sockets outside the sandbox;
//  3. executes the command, which becomes the init process of its PID
//     namespace.
//
// Landlock is inherited by every child and cannot be lifted, and it forbids
// mount and umount, so the hidden secrets stay hidden. Landlock judges the
// file a path resolves to, so symbolic links, "..", variables, xargs, find
// -delete, a Python or Node call: every spelling of a write outside the roots
// fails with EACCES. When the init process of a PID namespace dies, the kernel
// kills every other process in it, so a setsid or nohup child cannot outlive
// the command (or the persistent shell) it came from.
//
// # Why Landlock and namespaces, not bubblewrap
//
// See docs/sandbox.md: in short, both are in the kernel (no package to install,
// nothing setuid), both are unprivileged, and a re-executed Go launcher lets the
// tools keep their exec.Cmd (pipes, process groups, Pdeathsig) as they are.
//
// Where the kernel lacks Landlock (ABI 3 or later, for truncate) or
// unprivileged user namespaces, Probe says why, and the callers do not run
// unconfined silently: see docs/sandbox.md.
package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// LauncherArg is the first argument that makes the executable act as the
// sandbox launcher (see Launch).
const LauncherArg = "__exocortex-sandbox"

// MinLandlockABI is the oldest Landlock ABI the sandbox accepts: ABI 3 is the
// first to control truncate(2), without which a file outside the roots could be
// emptied.
const MinLandlockABI = 3

// Policy says what a sandboxed command may do.
type Policy struct {
	// WriteRoots are the directories the command may write beneath (absolute).
	WriteRoots []string `json:"write_roots"`
	// Secrets are files and directories the command may not read (absolute);
	// they appear empty inside the sandbox.
	Secrets []string `json:"secrets"`
	// Network lets the command use the network; without it the command has a
	// network namespace of its own with nothing in it.
	Network bool `json:"network"`
}

// DefaultSecrets are the secrets hidden under home whatever the configuration
// adds: SSH and GnuPG keys, cloud credentials, .netrc.
func DefaultSecrets(home string) []string {
	if home == "" {
		return nil
	}
	var out []string
	for _, p := range []string{".ssh", ".gnupg", ".aws", ".netrc", ".config/gcloud", ".docker/config.json", ".git-credentials"} {
		out = append(out, filepath.Join(home, p))
	}
	return out
}

// clean returns the policy with absolute, cleaned, de-duplicated paths.
func (p Policy) clean() (Policy, error) {
	norm := func(what string, in []string) ([]string, error) {
		var out []string
		for _, x := range in {
			if x == "" {
				continue
			}
			if !filepath.IsAbs(x) {
				return nil, fmt.Errorf("sandbox %s %q: use an absolute path", what, x)
			}
			x = filepath.Clean(x)
			// Resolve symbolic links, so a root given through a link is the
			// directory Landlock sees; a missing path stays as given.
			if r, err := filepath.EvalSymlinks(x); err == nil {
				x = r
			}
			if !slices.Contains(out, x) {
				out = append(out, x)
			}
		}
		return out, nil
	}
	var err error
	if p.WriteRoots, err = norm("write root", p.WriteRoots); err != nil {
		return p, err
	}
	if p.Secrets, err = norm("secret", p.Secrets); err != nil {
		return p, err
	}
	return p, nil
}

// Wrap rewrites cmd, built as usual with exec.Command and not yet started, so
// that it runs through the launcher under p. The command's path, arguments,
// environment, directory, standard streams and SysProcAttr (Setsid, Setpgid,
// Pdeathsig) are kept; the namespaces are added. exe is the executable that acts
// as the launcher ("" for os.Executable: the exocortex binary, or a test binary
// whose TestMain calls Launch).
func Wrap(cmd *exec.Cmd, p Policy, exe string) error {
	if cmd.Err != nil {
		return cmd.Err
	}
	if cmd.Process != nil {
		return fmt.Errorf("sandbox: %s is already started", cmd.Path)
	}
	p, err := p.clean()
	if err != nil {
		return err
	}
	if exe == "" {
		if exe, err = os.Executable(); err != nil {
			return fmt.Errorf("sandbox: finding the launcher (this executable): %w", err)
		}
	}
	spec, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("sandbox: encoding the policy: %w", err)
	}
	prog := cmd.Path
	argv := cmd.Args
	if len(argv) == 0 {
		argv = []string{prog}
	}
	cmd.Path = exe
	cmd.Args = append([]string{exe, LauncherArg, string(spec), prog, "--"}, argv...)
	return namespaces(cmd, p)
}

// parseLauncherArgs reads the launcher's arguments: LauncherArg, the policy,
// the program, "--", then the program's argv.
func parseLauncherArgs(args []string) (Policy, string, []string, error) {
	var p Policy
	if len(args) < 4 || args[0] != LauncherArg || args[3] != "--" {
		return p, "", nil, fmt.Errorf("usage: %s POLICY PROGRAM -- ARGV... (started by Exocortex, not by hand)", LauncherArg)
	}
	if err := json.Unmarshal([]byte(args[1]), &p); err != nil {
		return p, "", nil, fmt.Errorf("the policy %q: %w", args[1], err)
	}
	return p, args[2], args[4:], nil
}

// Status says whether the sandbox works on this machine.
type Status struct {
	// Available is true when commands can be confined.
	Available bool
	// LandlockABI is the kernel's Landlock ABI version (0: none).
	LandlockABI int
	// Reason says what is missing when the sandbox is not available.
	Reason string
}

// String is one line for the operator.
func (s Status) String() string {
	if s.Available {
		return fmt.Sprintf("sandbox: on (Landlock ABI %d, user, mount and PID namespaces)", s.LandlockABI)
	}
	return "sandbox: NOT AVAILABLE: " + s.Reason
}

// EnvUnavailable, when set in the environment, makes Probe report the sandbox
// as not available, with the variable's value in the reason: what a kernel
// without Landlock or user namespaces looks like, for tests and for trying the
// fallback (every command is asked for). It never turns a sandbox on.
const EnvUnavailable = "EXOCORTEX_SANDBOX_UNAVAILABLE"

// Probe starts the launcher once, with a throwaway policy, to find out whether
// the sandbox works here (the kernel's Landlock version, and whether this user
// may create the namespaces). exe is as for Wrap. The launcher gets this
// process's environment.
func Probe(exe string) Status { return ProbeEnv(exe, nil) }

// ProbeEnv is Probe with the launcher started from env (KEY=VALUE lines; nil:
// this process's environment), for a caller that runs inside the host on
// behalf of a plugin and gives its children the plugin's environment.
func ProbeEnv(exe string, env []string) Status {
	abi := landlockABI()
	if v := lookup(env, EnvUnavailable); v != "" {
		return Status{LandlockABI: abi, Reason: fmt.Sprintf("forced off by $%s (%s)", EnvUnavailable, v)}
	}
	if abi < MinLandlockABI {
		why := "the kernel has no Landlock (it needs Linux 6.2 or later with Landlock enabled in the lsm= boot list)"
		if abi > 0 {
			why = fmt.Sprintf("the kernel's Landlock is ABI %d; the sandbox needs ABI %d (Linux 6.2) or later", abi, MinLandlockABI)
		}
		return Status{LandlockABI: abi, Reason: why}
	}
	dir, err := os.MkdirTemp("", "exocortex-probe-")
	if err != nil {
		return Status{LandlockABI: abi, Reason: "creating a probe directory: " + err.Error()}
	}
	defer os.RemoveAll(dir)
	if exe == "" {
		if exe, err = os.Executable(); err != nil {
			return Status{LandlockABI: abi, Reason: "finding the launcher (this executable): " + err.Error()}
		}
	}
	// An empty program: the launcher sets everything up, then exits 0.
	p := Policy{WriteRoots: []string{dir}, Secrets: []string{filepath.Join(dir, "secret")}}
	spec, _ := json.Marshal(p)
	cmd := exec.Command(exe, LauncherArg, string(spec), "", "--")
	cmd.Env = slices.Clip(env)
	if err := namespaces(cmd, p); err != nil {
		return Status{LandlockABI: abi, Reason: err.Error()}
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if msg == "" {
			msg = err.Error()
		}
		return Status{LandlockABI: abi, Reason: "starting a sandboxed process failed (" + msg + "); unprivileged user namespaces may be turned off (sysctl kernel.unprivileged_userns_clone, or an AppArmor restriction)"}
	}
	return Status{Available: true, LandlockABI: abi}
}

// lookup is the value of key in env (the last one wins, as in a process's
// environment), or in this process's environment when env is nil.
func lookup(env []string, key string) string {
	if env == nil {
		return os.Getenv(key)
	}
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}
