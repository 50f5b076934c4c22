package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/exocortex/exocortex/core/llm/scripted"
	"github.com/exocortex/exocortex/internal/procstat"
	"github.com/exocortex/exocortex/scripts/peers/peer"
)

// finalAnswer is the scripted final answer; a run whose output lacks it failed.
const finalAnswer = "All parts read: TASK20-DONE"

// sample is one run's figures; err says why a run did not give them.
type sample struct {
	wallMS, cpuMS      float64
	cpuFirstMS         float64 // the tree's CPU when the first main request arrived
	main, side         int
	pssMax, pssEnd     float64
	firstTokens        int
	maxTokens, over    int
	err                error
	requests, finished bool
}

// once runs t on the task in a fresh home (its caches in cache, kept across
// runs) against a fresh scripted server.
func once(ctx context.Context, o options, counter *peer.Counter, t peer.Tool, cache, label string) sample {
	home, err := os.MkdirTemp("", "task20-"+t.Name+"-")
	if err != nil {
		return sample{err: fmt.Errorf("home for %s: %w", t.Name, err)}
	}
	defer os.RemoveAll(home)
	if err := writeParts(home, o.turns, o.outputBytes); err != nil {
		return sample{err: err}
	}
	var (
		mu       sync.Mutex
		s        sample
		pid      int
		pidReady = make(chan struct{})
	)
	measure := func() (float64, float64) {
		<-pidReady
		cpu, pss := procstat.Tree(pid)
		return peer.MS(cpu), pss
	}
	choose := func(req scripted.OpenAIRequest, i int) (scripted.Reply, bool) {
		if o.dump != "" {
			if b, err := json.MarshalIndent(req, "", "  "); err == nil {
				_ = os.WriteFile(filepath.Join(o.dump, fmt.Sprintf("%s-%s-%02d.json", t.Name, label, i)), b, 0o644)
			}
		}
		tokens := counter.Request(req)
		cpu, pss := measure()
		mu.Lock()
		defer mu.Unlock()
		s.requests = true
		s.pssMax = max(s.pssMax, pss)
		reply, main := t.Read(req, home, partName(s.main+1))
		if !main {
			s.side++
			return t.Answer("Reading the parts."), true
		}
		if s.main == 0 {
			s.firstTokens, s.cpuFirstMS = tokens, cpu
		}
		s.maxTokens = max(s.maxTokens, tokens)
		if o.window > 0 && tokens > o.window {
			s.over++
		}
		s.main++
		if s.main > o.turns {
			s.pssEnd = pss
			s.finished = true
			return t.Answer(finalAnswer), true
		}
		return reply, true
	}
	srv, err := scripted.NewOpenAIServer(scripted.Script{Choose: choose})
	if err != nil {
		return sample{err: fmt.Errorf("scripted server: %w", err)}
	}
	defer srv.Close()
	fr, err := front(srv.URL())
	if err != nil {
		return sample{err: err}
	}
	defer fr.Close()
	args, env, err := t.Setup(peer.Run{Home: home, BaseURL: fr.URL + "/v1", Model: srv.Model(), Window: o.window, Cache: cache,
		Prompt: fmt.Sprintf("Read the files part01.txt to part%02d.txt in this directory one at a time, in order, with your file-reading or shell tool, then answer DONE.", o.turns)})
	if err != nil {
		return sample{err: fmt.Errorf("%s setup: %w", t.Name, err)}
	}
	stop := make(chan struct{})
	var sampler sync.WaitGroup
	p := peer.Start(ctx, t.Exe, args, env, home, o.timeout, func(p int, _ time.Time) {
		pid = p
		close(pidReady)
		sampler.Add(1)
		go func() { // PSS between requests too
			defer sampler.Done()
			tick := time.NewTicker(200 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
					_, pss := measure()
					mu.Lock()
					s.pssMax = max(s.pssMax, pss)
					mu.Unlock()
				}
			}
		}()
	})
	close(stop)
	sampler.Wait()
	if pid == 0 {
		close(pidReady)
	}
	mu.Lock()
	defer mu.Unlock()
	s.wallMS, s.cpuMS = peer.MS(p.Wall), peer.MS(p.CPU)
	tail := peer.Tail(p.Output, 240)
	switch {
	case p.Err != nil:
		s.err = fmt.Errorf("%s: %w", t.Name, p.Err)
	case !s.requests:
		s.err = fmt.Errorf("%s: no model request reached the scripted server: %s", t.Name, tail)
	case !s.finished:
		s.err = fmt.Errorf("%s: %d main requests of %d: %s", t.Name, s.main, o.turns+1, tail)
	case !strings.Contains(p.Output, "TASK20-DONE"):
		s.err = fmt.Errorf("%s: the scripted answer is not in its output: %s", t.Name, tail)
	}
	return s
}
