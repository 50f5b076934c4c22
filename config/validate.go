package config

import (
	"errors"
	"fmt"
	"sort"
	"time"
)

// Validate checks the values a YAML type cannot: counts that must be positive and
// deadlines that must be longer than zero. Each error names the setting as it is
// written in config.yaml, the value, and what to write instead; all of them are
// reported at once. A negative timeout, for instance, would otherwise make every
// plugin call fail at once and quarantine the built-in plugins.
func (c Config) Validate() error {
	var errs []error
	positive := func(key string, v int, what string) {
		if v <= 0 {
			errs = append(errs, fmt.Errorf("%s: %d is not allowed: give a positive number of %s", key, v, what))
		}
	}
	duration := func(key string, d Duration) {
		if d <= 0 {
			errs = append(errs, fmt.Errorf("%s: %s is not allowed: give a positive duration such as 10s or 2m", key, time.Duration(d)))
		}
	}
	if c.NumCtx < 0 {
		errs = append(errs, fmt.Errorf("num_ctx: %d is not allowed: give a positive number of tokens (e.g. 8192), or 0 to ask the model", c.NumCtx))
	}
	positive("max_num_ctx", c.MaxNumCtx, "tokens (e.g. 8192)")
	positive("max_iterations", c.MaxIterations, "iterations (e.g. 25)")
	positive("unusable_limit", c.UnusableLimit, "replies (e.g. 5)")
	duration("timeouts.default", c.Timeouts.Default)
	duration("timeouts.tool", c.Timeouts.Tool)
	if c.Timeouts.Compress < 0 {
		errs = append(errs, fmt.Errorf("timeouts.compress: %s is not allowed: give a duration such as 20s", time.Duration(c.Timeouts.Compress)))
	}
	for _, k := range sortedNames(c.Timeouts.Tools) {
		duration("timeouts.tools."+k, c.Timeouts.Tools[k])
	}
	for _, k := range sortedNames(c.Timeouts.Extensions) {
		duration("timeouts.extensions."+k, c.Timeouts.Extensions[k])
	}
	u := c.UtilityCalls
	for _, f := range []struct {
		key string
		v   int
	}{{"utility_calls.timeout", int(min(u.Timeout, 1))}, {"utility_calls.per_minute", u.PerMinute}, {"utility_calls.burst", u.Burst},
		{"utility_calls.concurrent", u.Concurrent}, {"utility_calls.max_prompt_bytes", u.MaxPromptBytes}} {
		if f.v < 0 {
			errs = append(errs, fmt.Errorf("%s is negative: give a positive value, or leave it out for the default", f.key))
		}
	}
	if c.IdleSleep < 0 {
		errs = append(errs, fmt.Errorf("idle_sleep: %s is not allowed: give a duration such as 10m, or 0 to turn it off", time.Duration(c.IdleSleep)))
	}
	return errors.Join(errs...)
}

func sortedNames(m map[string]Duration) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
