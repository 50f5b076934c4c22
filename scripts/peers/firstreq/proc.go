package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// treeUsage sums the CPU (user and system, with the children already waited
// for) and the PSS of pid and every process under it, from /proc.
func treeUsage(pid int) (cpuMS, pssMB float64) {
	parent := map[int]int{}
	stats := map[int][]string{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(raw, ')') // the command name may hold spaces
		if i < 0 {
			continue
		}
		f := strings.Fields(string(raw[i+1:]))
		if len(f) < 15 {
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
	const ticksPerSecond = 100 // USER_HZ on Linux
	for p, f := range stats {
		if !in(p) {
			continue
		}
		for _, s := range f[11:15] { // utime, stime, cutime, cstime
			v, _ := strconv.ParseFloat(s, 64)
			cpuMS += v * 1000 / ticksPerSecond
		}
		pssMB += pss(p)
	}
	return cpuMS, pssMB
}

// pss is a process's proportional set size in MB (smaps_rollup), 0 if unknown.
func pss(pid int) float64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "Pss:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 64)
			return kb / 1024
		}
	}
	return 0
}
