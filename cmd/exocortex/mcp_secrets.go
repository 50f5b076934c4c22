package main

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sync"

	"github.com/exocortex/exocortex/config"
	"github.com/exocortex/exocortex/secrets"
)

// mcpSecrets resolves the §§secret(NAME) placeholders of the MCP servers'
// env and headers for the mcp-servers plugin (mcpclient.Options.Secrets):
// config.yaml and the plugin settings hold only the placeholders, and the
// value is read from the home's secrets store when a server starts, in the
// plugin's process alone. Only the secrets a placeholder names are read; an
// env source is refused naming it, since the host keeps the variables of
// the secrets out of every plugin's environment: give such a secret a file:
// or keyring: source.
func mcpSecrets() func(string) (string, error) {
	var (
		once sync.Once
		cfg  secrets.Config
		err  error
	)
	return func(placeholder string) (string, error) {
		once.Do(func() {
			home, herr := config.Home()
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
			if src.Env != "" {
				return "", fmt.Errorf("%s comes from the environment variable %s, which the host keeps out of its plugins' environment: give the secret a file: or keyring: source in config.yaml's secrets to use it in an MCP server's env or headers", secrets.Placeholder(n), src.Env)
			}
			sub[n] = src
		}
		opts := secretLoadOptions()
		opts.Env = func(string) (string, bool) { return "", false }
		store, lerr := secrets.Load(sub, opts)
		if lerr != nil {
			return "", lerr
		}
		return store.Substitute(placeholder)
	}
}

func keys(c secrets.Config) []string { return slices.Sorted(maps.Keys(c)) }
