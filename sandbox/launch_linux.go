package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsyscall "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// landlockABI is the kernel's Landlock ABI version, 0 without Landlock.
func landlockABI() int {
	v, err := llsyscall.LandlockGetABIVersion()
	if err != nil {
		return 0
	}
	return v
}

// namespaces makes cmd start in new user, mount and PID namespaces (and a
// network namespace when p has no network), as root of the new user namespace
// so that the launcher may mount; the launcher gives the command the caller's
// own user id back.
func namespaces(cmd *exec.Cmd, p Policy) error {
	attr := cmd.SysProcAttr
	if attr == nil {
		attr = &syscall.SysProcAttr{}
		cmd.SysProcAttr = attr
	}
	// The sandbox dies with its caller, whatever the caller asked for.
	if attr.Pdeathsig == 0 {
		attr.Pdeathsig = syscall.SIGKILL
	}
	attr.Cloneflags |= syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID
	if !p.Network {
		attr.Cloneflags |= syscall.CLONE_NEWNET
	}
	attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}}
	attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}
	attr.GidMappingsEnableSetgroups = false
	// The launcher hands the command the caller's ids back through these.
	cmd.Env = append(envOf(cmd), envUID+"="+fmt.Sprint(os.Getuid()), envGID+"="+fmt.Sprint(os.Getgid()))
	return nil
}

// Environment variables from Wrap to the launcher (removed before the command
// runs).
const (
	envUID = "EXOCORTEX_SANDBOX_UID"
	envGID = "EXOCORTEX_SANDBOX_GID"
)

func envOf(cmd *exec.Cmd) []string {
	if cmd.Env != nil {
		return cmd.Env
	}
	return os.Environ()
}

// Launch makes this process the sandbox launcher when it was started as one
// (its first argument is LauncherArg), and then never returns: it exits with
// the command's status, or 126 with a message on standard error when the
// sandbox could not be set up (the command does not run then). Otherwise it
// returns at once. The program's main calls it first thing, as does the
// TestMain of a package whose tests run sandboxed commands.
func Launch() {
	if len(os.Args) < 2 {
		return
	}
	var code int
	var err error
	switch os.Args[1] {
	case LauncherArg:
		code, err = launch(os.Args[1:])
	case stage2Arg:
		err = confine(os.Args[1:])
	case reaperArg:
		code, err = reap(os.Args[1:])
	default:
		return
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "exocortex sandbox: %v (the command did not run)\n", err)
		os.Exit(126)
	}
	os.Exit(code)
}

// launch sets up the sandbox in the namespaces it was started in, runs the
// command as a child and returns its status.
func launch(args []string) (int, error) {
	p, prog, argv, err := parseLauncherArgs(args)
	if err != nil {
		return 0, err
	}
	uid, gid := os.Getenv(envUID), os.Getenv(envGID)
	os.Unsetenv(envUID)
	os.Unsetenv(envGID)
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return 0, fmt.Errorf("making the mount tree private: %w", err)
	}
	// A /proc of this PID namespace, so that ps and kill agree on numbers;
	// best effort (a container may forbid it, and then /proc is the host's).
	_ = unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "")
	shm := unix.Mount("tmpfs", "/dev/shm", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777") == nil
	for _, s := range p.Secrets {
		if err := hide(s); err != nil {
			return 0, err
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return 0, fmt.Errorf("finding the launcher's executable: %w", err)
	}
	cmd := exec.Command(exe, append([]string{stage2Arg, args[1], prog, "--"}, argv...)...)
	if shm {
		cmd.Env = append(os.Environ(), envShm+"=1")
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	// The command gets the caller's own user and group ids back, in a user
	// namespace of its own, so it holds no capability and files show their
	// real owners.
	var u, g int
	fmt.Sscan(uid, &u)
	fmt.Sscan(gid, &g)
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: u, HostID: 0, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: g, HostID: 0, Size: 1}},
		// The launcher is this namespace's init: should it die, everything
		// dies; should the command's parent (this process) die, so does it.
		Pdeathsig: syscall.SIGKILL,
	}
	// Signals sent to the launcher go to the command (the launcher, as the
	// namespace's init, ignores them otherwise); SIGKILL ends all.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2)
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("starting the confined process for %s: %w", prog, err)
	}
	go func() {
		for s := range sigs {
			_ = cmd.Process.Signal(s)
		}
	}()
	return waitFor(cmd.Process.Pid)
}

// waitFor reaps every child the namespace hands to its init (orphans, so they
// do not linger as zombies) until the command itself ends, and returns the
// command's status in the shell's convention.
func waitFor(child int) (int, error) {
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("waiting for the command: %w", err)
		}
		if pid != child {
			continue
		}
		if ws.Signaled() {
			return 128 + int(ws.Signal()), nil
		}
		return ws.ExitStatus(), nil
	}
}

// hide makes a secret unreadable inside the sandbox: an empty read-only tmpfs
// over a directory, /dev/null over a file. A missing secret needs nothing
// (nothing outside the roots can be created).
func hide(path string) error {
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("hiding the secret %s: %w", path, err)
	}
	if fi.IsDir() {
		if err := unix.Mount("tmpfs", path, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=0500,size=4k"); err != nil {
			return fmt.Errorf("hiding the secret directory %s: %w", path, err)
		}
		return nil
	}
	if err := unix.Mount("/dev/null", path, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("hiding the secret file %s: %w", filepath.Clean(path), err)
	}
	_ = unix.Mount("", path, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, "")
	return nil
}

// stage2Arg makes the executable the second stage: it restricts itself with
// Landlock and executes the command.
const stage2Arg = LauncherArg + "-confine"

// envShm tells the second stage that /dev/shm is the sandbox's own.
const envShm = "EXOCORTEX_SANDBOX_SHM"

// confine is the second stage, started by the launcher in a user namespace of
// its own with the caller's ids and no capability: it restricts itself with
// Landlock (inherited by everything it starts, never lifted) and executes the
// command in its place. It returns only on failure.
func confine(args []string) error {
	p, prog, argv, err := parseLauncherArgs(append([]string{LauncherArg}, args[1:]...))
	if err != nil {
		return err
	}
	shm := os.Getenv(envShm) == "1"
	os.Unsetenv(envShm)
	if abi := landlockABI(); abi < MinLandlockABI {
		return fmt.Errorf("Landlock ABI %d, need %d or later", abi, MinLandlockABI)
	}
	rules := []landlock.Rule{
		landlock.RODirs("/"),
		landlock.RWFiles("/dev/null", "/dev/zero", "/dev/full", "/dev/tty").WithIoctlDev().IgnoreIfMissing(),
	}
	if len(p.WriteRoots) > 0 {
		rules = append(rules, landlock.RWDirs(p.WriteRoots...).WithRefer().IgnoreIfMissing())
	}
	if shm {
		rules = append(rules, landlock.RWDirs("/dev/shm").WithRefer())
	}
	cfg := landlock.Config{HandledAccessFS: landlock.V7.HandledAccessFS, Scoped: landlock.V7.Scoped}.BestEffort()
	if err := cfg.Restrict(rules...); err != nil {
		return fmt.Errorf("restricting with Landlock: %w", err)
	}
	if prog == "" {
		os.Exit(0) // a probe
	}
	if err := syscall.Exec(prog, argv, os.Environ()); err != nil {
		return fmt.Errorf("executing %s: %w", prog, err)
	}
	return nil
}
