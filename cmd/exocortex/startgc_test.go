package main

import (
	"os"
	"runtime/debug"
	"slices"
	"testing"
)

// TestRestoreStartupGC: a built-in plugin started with the collector off puts
// it back as the host's GOGC had it, and its environment back as it was: GOGC
// unset or the operator's value, StartupGOGCEnv gone; a process not started so
// is left alone.
func TestRestoreStartupGC(t *testing.T) {
	tests := []struct {
		name     string
		env      []string // set before; "K" alone unsets K
		percent  int      // the collector's setting after
		wantGOGC string   // "" with unset
		unset    bool
	}{
		{"host without GOGC", startupGCEnvWith(""), 100, "", true},
		{"host GOGC=200", startupGCEnvWith("200"), 200, "200", false},
		{"host GOGC=off", startupGCEnvWith("off"), -1, "off", false},
		{"host GOGC unreadable", startupGCEnvWith("lots"), 100, "lots", false},
		{"not a built-in start", []string{"GOGC=150", StartupGOGCEnv}, 150, "150", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prev := debug.SetGCPercent(150)
			t.Cleanup(func() { debug.SetGCPercent(prev) })
			for _, kv := range tt.env {
				k, v, ok := cut(kv)
				t.Setenv(k, v) // restored after the test
				if !ok {
					os.Unsetenv(k)
				}
			}
			restoreStartupGC()
			if got := debug.SetGCPercent(150); got != tt.percent {
				t.Errorf("collector at %d%%, want %d", got, tt.percent)
			}
			got, set := os.LookupEnv("GOGC")
			if set == tt.unset || got != tt.wantGOGC {
				t.Errorf("GOGC = %q (set %v), want %q (set %v)", got, set, tt.wantGOGC, !tt.unset)
			}
			if _, set := os.LookupEnv(StartupGOGCEnv); set {
				t.Errorf("%s still set", StartupGOGCEnv)
			}
		})
	}
	if env := startupGCEnv(); !slices.Contains(env, "GOGC=off") {
		t.Errorf("startupGCEnv() = %q, want GOGC=off in it", env)
	}
}

// startupGCEnvWith is startupGCEnv in a host whose GOGC is v.
func startupGCEnvWith(v string) []string {
	return []string{"GOGC=off", StartupGOGCEnv + "=" + v}
}

func cut(kv string) (k, v string, ok bool) {
	for i := range kv {
		if kv[i] == '=' {
			return kv[:i], kv[i+1:], true
		}
	}
	return kv, "", false
}
