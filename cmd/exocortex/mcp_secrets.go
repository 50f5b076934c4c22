package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/exocortex/exocortex/config"
	"github.com/exocortex/exocortex/secrets"
)

// mcpEnvSecretsVar hands the mcp-servers built-in plugin the values of the
// env-sourced secrets its servers' placeholders name (a JSON object, by
// variable), since the host keeps those variables out of every plugin's
// environment. The plugin reads it and removes it from its own environment
// before it starts a server (takeMCPEnvSecrets), so no MCP server inherits it.
const mcpEnvSecretsVar = "EXOCORTEX_MCP_ENV_SECRETS"

// mcpEnvSecrets is the mcpEnvSecretsVar entry for the mcp-servers plugin
// ("" when no placeholder of the MCP configuration names an env-sourced
// secret): only the secrets named, never another.
func (a *app) mcpEnvSecrets(store *secrets.Store) string {
	servers, _ := a.cfg.MCPServersAt(a.home)
	vals := map[string]string{}
	for _, srv := range servers {
		for _, m := range []map[string]string{srv.Env, srv.Headers} {
			for _, v := range m {
				for _, n := range secrets.Placeholders(v) {
					src, ok := store.Source(n)
					if !ok || src.Env == "" {
						continue
					}
					if val, err := store.Substitute(secrets.Placeholder(n)); err == nil {
						vals[src.Env] = val
					}
				}
			}
		}
	}
	if len(vals) == 0 {
		return ""
	}
	b, _ := json.Marshal(vals)
	return mcpEnvSecretsVar + "=" + string(b)
}

// takeMCPEnvSecrets reads the values the host handed the plugin in
// mcpEnvSecretsVar and removes the variable from the process's environment,
// before any MCP server is started with it; it returns a lookup by variable.
func takeMCPEnvSecrets() func(string) (string, bool) {
	raw, ok := os.LookupEnv(mcpEnvSecretsVar)
	_ = os.Unsetenv(mcpEnvSecretsVar)
	return mcpEnvLookup(raw, ok)
}

// splitMCPEnvSecrets is takeMCPEnvSecrets for the mcp-servers plugin served
// in the host's process: it reads mcpEnvSecretsVar from env, the environment
// the plugin's process would have had, and returns that environment without
// it (what the MCP servers start from) beside the lookup.
func splitMCPEnvSecrets(env []string) (rest []string, lookup func(string) (string, bool)) {
	raw, found := "", false
	rest = make([]string, 0, len(env))
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, mcpEnvSecretsVar+"="); ok {
			raw, found = v, true
			continue
		}
		rest = append(rest, kv)
	}
	return rest, mcpEnvLookup(raw, found)
}

func mcpEnvLookup(raw string, ok bool) func(string) (string, bool) {
	vals := map[string]string{}
	if ok {
		_ = json.Unmarshal([]byte(raw), &vals)
	}
	return func(k string) (string, bool) {
		v, ok := vals[k]
		return v, ok
	}
}

// mcpSecrets resolves the §§secret(NAME) placeholders of the MCP servers'
// env and headers for the mcp-servers plugin (mcpclient.Options.Secrets):
// config.yaml and the plugin settings hold only the placeholders, and the
// value is read from the home's secrets store when a server starts, in the
// plugin's process alone. Only the secrets a placeholder names are read. An
// env source's variable is looked up with env: in the plugin, the values the
// host handed over (takeMCPEnvSecrets), since the host keeps the secrets'
// variables out of every plugin's environment; in `exocortex mcp list`, the
// process's own environment. The home is homeDir's (config.Home for a
// process of its own; the plugin's environment's for one in the host's).
func mcpSecrets(homeDir func() (string, error), env func(string) (string, bool)) func(string) (string, error) {
	var (
		once sync.Once
		cfg  secrets.Config
		err  error
	)
	return func(placeholder string) (string, error) {
		once.Do(func() {
			home, herr := homeDir()
			if herr != nil {
				err = herr
				return
			}
			c, lerr := config.Load(home)
			if lerr != nil {
				err = fmt.Errorf("%s: %w", filepath.Join(home, config.FileName), lerr)
				return
			}
			cfg = c.Secrets
		})
		if err != nil {
			return "", err
		}
		names := secrets.Placeholders(placeholder)
		sub := secrets.Config{}
		for _, n := range names {
			src, ok := cfg[n]
			if !ok {
				return "", &secrets.UnknownError{Name: n, Known: keys(cfg)}
			}
			if _, ok := env(src.Env); src.Env != "" && !ok {
				return "", fmt.Errorf("%s comes from the environment variable %s, which is not set where exocortex started (or the host did not hand it to the mcp-servers plugin): set it, or give the secret a file: or keyring: source", secrets.Placeholder(n), src.Env)
			}
			sub[n] = src
		}
		opts := secretLoadOptions()
		opts.Env = env
		store, lerr := secrets.Load(sub, opts)
		if lerr != nil {
			return "", lerr
		}
		return store.Substitute(placeholder)
	}
}

func keys(c secrets.Config) []string { return slices.Sorted(maps.Keys(c)) }
