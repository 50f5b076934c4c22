package lint

import (
	"fmt"
	"regexp"
	"strings"
)

// SecretRead is a place in a plugin's code that reads the operator's secrets
// (Agent Zero's helpers.secrets: get_secrets_manager, load_secrets,
// replace_placeholders; an A0_SECRET_ variable), found by FindSecretReads.
type SecretRead struct {
	Plugin string `json:"plugin"`
	// File is relative to the plugin's directory, slash-separated.
	File string `json:"file"`
	Line int    `json:"line"`
	// What is the read as written, e.g. "get_secrets_manager(".
	What string `json:"what"`
}

// secretReadRE finds the reads: Agent Zero's secrets API and its variables.
var secretReadRE = regexp.MustCompile(`\b(get_secrets_manager|get_default_secrets_manager|load_secrets|replace_placeholders)\s*\(|\bA0_SECRET_[A-Za-z0-9_]*`)

// FindSecretReads returns the secret reads of one file's code (the lint
// command reads the files; this does no I/O). Comment lines are skipped.
func FindSecretReads(plugin, file string, code []byte) []SecretRead {
	if !strings.Contains(string(code), "secret") && !strings.Contains(string(code), "SECRET") {
		return nil
	}
	var out []SecretRead
	for i, line := range strings.Split(string(code), "\n") {
		if t := strings.TrimSpace(line); strings.HasPrefix(t, "#") || strings.HasPrefix(t, "//") {
			continue
		}
		if m := secretReadRE.FindString(line); m != "" {
			out = append(out, SecretRead{Plugin: plugin, File: file, Line: i + 1, What: strings.TrimSpace(m)})
		}
	}
	return out
}

// secretReads reports code that reads secrets in a plugin none of whose tools
// declares uses_secrets (EXO139): the host keeps every value away from such a
// plugin (its requests are masked, the variables secrets come from are not in
// its environment), so the read finds nothing or a placeholder.
func (c *checker) secretReads() {
	declares := map[string]bool{}
	for _, p := range c.in.Model.Plugins {
		for _, t := range p.Manifest.GetTools() {
			if len(t.GetUsesSecrets()) > 0 {
				declares[p.Name] = true
			}
		}
	}
	for _, r := range c.in.SecretReads {
		if declares[r.Plugin] {
			continue
		}
		c.add(Finding{Code: "EXO139", Severity: Warning, Plugin: r.Plugin, File: fmt.Sprintf("%s:%d", r.File, r.Line),
			Message: fmt.Sprintf("the plugin's code reads the operator's secrets (%q), but none of its tools declares uses_secrets: the host keeps the values from it, so the read is refused (it finds no value)", r.What),
			Fix:     "declare the secrets the tool needs (uses_secrets: [NAME], or \"*\") and let the host put the value in place of §§secret(NAME) in the tool's arguments, instead of reading it in the plugin"})
	}
}
