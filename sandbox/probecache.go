package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// probeInputs are the kernel's switches a probe's answer depends on besides
// Landlock: whether unprivileged users may create user namespaces (Debian's
// and Ubuntu's switches, the namespace limit, AppArmor's restriction).
var probeInputs = []string{
	"/proc/sys/kernel/unprivileged_userns_clone",
	"/proc/sys/user/max_user_namespaces",
	"/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
	"/proc/sys/kernel/apparmor_restrict_unprivileged_unconfined",
}

// cachedProbe is ProbeCached's file.
type cachedProbe struct {
	Key    string `json:"key"`
	Status Status `json:"status"`
}

// ProbeCached is Probe, its answer kept in file and given again while
// nothing it depends on has changed: the boot (the kernel's boot id, so a
// new kernel or a reboot probes again), the launcher's executable (path,
// size and modification time), the user, the kernel's Landlock ABI and its
// switches for unprivileged user namespaces. It is for a start-up that
// only tells the operator whether the sandbox works (two process starts
// saved); what confines a command probes for itself (Probe) before it runs
// one. Where no key can be made (no boot id: not Linux), or with
// EnvUnavailable set, it probes every time. A file that cannot be written is
// no error: the next call probes again.
func ProbeCached(file, exe string) Status {
	if os.Getenv(EnvUnavailable) != "" {
		return Probe(exe)
	}
	key, ok := probeKey(exe)
	if !ok {
		return Probe(exe)
	}
	if b, err := os.ReadFile(file); err == nil {
		var c cachedProbe
		if json.Unmarshal(b, &c) == nil && c.Key == key {
			return c.Status
		}
	}
	st := Probe(exe)
	if b, err := json.Marshal(cachedProbe{Key: key, Status: st}); err == nil {
		writeAtomic(file, b)
	}
	return st
}

// probeKey is what a probe's answer depends on, as one string.
func probeKey(exe string) (string, bool) {
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "", false
	}
	if exe == "" {
		if exe, err = os.Executable(); err != nil {
			return "", false
		}
	}
	fi, err := os.Stat(exe)
	if err != nil {
		return "", false
	}
	parts := []string{strings.TrimSpace(string(boot)), exe, fmt.Sprint(fi.Size(), fi.ModTime().UnixNano()),
		fmt.Sprint(os.Getuid(), os.Getgid()), fmt.Sprint(landlockABI())}
	for _, p := range probeInputs {
		v, err := os.ReadFile(p)
		if err != nil {
			parts = append(parts, "-")
			continue
		}
		parts = append(parts, strings.TrimSpace(string(v)))
	}
	return strings.Join(parts, "|"), true
}

// writeAtomic writes b to file through a temporary file in its directory
// (made if missing), so a reader never sees half of it; errors are dropped.
func writeAtomic(file string, b []byte) {
	dir := filepath.Dir(file)
	if os.MkdirAll(dir, 0o700) != nil {
		return
	}
	f, err := os.CreateTemp(dir, ".probe-*")
	if err != nil {
		return
	}
	_, werr := f.Write(b)
	cerr := f.Close()
	if werr != nil || cerr != nil || os.Rename(f.Name(), file) != nil {
		os.Remove(f.Name())
	}
}
