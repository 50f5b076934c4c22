//go:build linux

package procstat

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ticksPerSecond is USER_HZ, the unit of /proc/PID/stat's CPU times on Linux.
const ticksPerSecond = 100

// statFields is /proc/PID/stat's fields after the command name (which may
// hold spaces and parentheses): the state is f[0], the parent f[1], utime,
// stime, cutime and cstime f[11:15].
func statFields(pid string) ([]string, bool) {
	raw, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
	if err != nil {
		return nil, false
	}
	i := bytes.LastIndexByte(raw, ')')
	if i < 0 {
		return nil, false
	}
	f := strings.Fields(string(raw[i+1:]))
	return f, len(f) >= 15
}

func ticks(fields []string) time.Duration {
	var n float64
	for _, s := range fields {
		v, _ := strconv.ParseFloat(s, 64)
		n += v
	}
	return time.Duration(n * float64(time.Second) / ticksPerSecond)
}

// ProcessCPU is the user and system CPU time process pid has used itself
// (its children not counted).
func ProcessCPU(pid int) (time.Duration, error) {
	f, ok := statFields(strconv.Itoa(pid))
	if !ok {
		return 0, fmt.Errorf("/proc/%d/stat: no such process or an unreadable line", pid)
	}
	return ticks(f[11:13]), nil
}

// Tree sums the CPU (user and system, with the children already waited for)
// and the PSS of pid and every process under it, from /proc.
func Tree(pid int) (cpu time.Duration, pssMB float64) {
	parent := map[int]int{}
	stats := map[int][]string{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		f, ok := statFields(e.Name())
		if !ok {
			continue
		}
		pp, _ := strconv.Atoi(f[1])
		parent[p], stats[p] = pp, f
	}
	in := func(p int) bool {
		for ; p > 1; p = parent[p] {
			if p == pid {
				return true
			}
		}
		return false
	}
	for p, f := range stats {
		if in(p) {
			cpu += ticks(f[11:15])
			pssMB += PSS(p)
		}
	}
	return cpu, pssMB
}

// PSS is a process's proportional set size in MB (smaps_rollup), 0 if unknown.
func PSS(pid int) float64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "Pss:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 64)
			return kb / 1024
		}
	}
	return 0
}
