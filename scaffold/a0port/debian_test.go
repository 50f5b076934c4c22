package a0port

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/sdk/python/pyimport"
)

// TestDebianHas asks this machine's apt-cache about a package Debian has and
// one it has not; without apt-cache or package lists every answer is Unknown.
func TestDebianHas(t *testing.T) {
	has := debianHas(t.Context(), []string{"python3-yaml", "python3-not-a-package-xyz"})
	if _, err := exec.LookPath("apt-cache"); err != nil || len(has) == 0 {
		if len(has) != 0 {
			t.Fatalf("answers %v without apt-cache", has)
		}
		t.Skip("apt-cache or its package lists are missing here (apt-get update): nothing to ask")
	}
	if has["python3-yaml"] != pyimport.Available || has["python3-not-a-package-xyz"] != pyimport.Absent {
		t.Errorf("answers %v: want python3-yaml available and python3-not-a-package-xyz absent", has)
	}
}

// TestInstallFixNamesThePackage: the advice names the pip distribution of the
// module (bs4 is beautifulsoup4) and Debian's package as apt-cache answered.
func TestInstallFixNamesThePackage(t *testing.T) {
	tests := []struct {
		module string
		debian pyimport.Availability
		want   string
	}{
		{"bs4", pyimport.Available, "apt-get install python3-bs4 (Debian's package), or `pip install --target PLUGIN_DIR beautifulsoup4`"},
		{"langchain_core.messages", pyimport.Absent, "`pip install --target PLUGIN_DIR langchain-core` (the plugin's directory is first on its import path) (Debian has no python3-langchain-core)"},
		{"crontab", pyimport.Available, "`pip install --target PLUGIN_DIR crontab` (the plugin's directory is first on its import path) (not Debian's python3-crontab: it is python-crontab"},
		{"aiohttp", pyimport.Unknown, "Debian's python3-aiohttp package if there is one (apt-get install python3-aiohttp), or `pip install --target PLUGIN_DIR aiohttp`"},
	}
	for _, tt := range tests {
		if got := pyimport.InstallFix(tt.module, tt.debian); !strings.Contains(got, tt.want) {
			t.Errorf("InstallFix(%q, %v) = %q, want it to hold %q", tt.module, tt.debian, got, tt.want)
		}
	}
}
