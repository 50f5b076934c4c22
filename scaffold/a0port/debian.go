package a0port

import (
	"bufio"
	"bytes"
	"context"
	"os/exec"
	"strings"
	"time"

	"github.com/exocortex/exocortex/sdk/python/pyimport"
)

// debianProbe is a package every Debian with package lists has: when
// apt-cache knows no candidate for it, its lists are missing (apt-get update
// never ran) and its silence about the others says nothing.
const debianProbe = "python3"

// debianHas asks apt-cache, once, whether Debian has each package (its
// candidate version); without apt-cache, or with empty package lists, every
// answer is Unknown.
func debianHas(ctx context.Context, pkgs []string) map[string]pyimport.Availability {
	out := map[string]pyimport.Availability{}
	if len(pkgs) == 0 {
		return out
	}
	bin, err := exec.LookPath("apt-cache")
	if err != nil {
		return out
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	raw, err := exec.CommandContext(ctx, bin, append([]string{"policy", debianProbe}, pkgs...)...).Output()
	if err != nil {
		return out
	}
	candidate := map[string]bool{}
	name := ""
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, " ") && strings.HasSuffix(line, ":") {
			name = strings.TrimSuffix(line, ":")
			continue
		}
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "Candidate:"); ok && name != "" {
			candidate[name] = strings.TrimSpace(v) != "(none)"
		}
	}
	if !candidate[debianProbe] {
		return out
	}
	for _, p := range pkgs {
		if candidate[p] {
			out[p] = pyimport.Available
		} else {
			out[p] = pyimport.Absent
		}
	}
	return out
}
