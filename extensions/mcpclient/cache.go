package mcpclient

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/google/renameio/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/exocortex/exocortex/toolsettings"
)

// The tool cache: the tools each server listed when it last started, by the
// hash of its configuration. A server found in it declares those tools at
// once and is started in the background, so the plugin (and every run and
// session) does not wait for it; a server not in it, or configured
// differently since, is waited for, within its init timeout.

type cacheEntry struct {
	Config string      `json:"config"`
	Tools  []*mcp.Tool `json:"tools"`
}

type toolCache map[string]cacheEntry

// configKey is the hash of a server's configuration.
func configKey(c toolsettings.MCPServer) string {
	b, _ := json.Marshal(c)
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:8])
}

func readCache(path string) toolCache {
	c := toolCache{}
	if path == "" {
		return c
	}
	if b, err := os.ReadFile(path); err == nil {
		_ = json.Unmarshal(b, &c) // a damaged cache is a cold start
	}
	return c
}

// cached are the tools of sv's configuration in the cache, if any.
func (c toolCache) cached(sv *server) (map[string]*mcp.Tool, bool) {
	e, ok := c[sv.name]
	if !ok || e.Config != configKey(sv.conf) || len(e.Tools) == 0 {
		return nil, false
	}
	out := make(map[string]*mcp.Tool, len(e.Tools))
	for _, t := range e.Tools {
		out[t.Name] = t
	}
	return out, true
}

// writeCache records the tools of every server that listed them.
func (s *Set) writeCache() {
	if s.cache == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := readCache(s.cache)
	for _, sv := range s.servers {
		sv.mu.Lock()
		if sv.listed != nil {
			e := cacheEntry{Config: configKey(sv.conf)}
			for _, n := range names(keys(sv.listed)) {
				e.Tools = append(e.Tools, sv.listed[n])
			}
			c[sv.name] = e
		}
		sv.mu.Unlock()
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err == nil {
		if err = os.MkdirAll(filepath.Dir(s.cache), 0o700); err == nil {
			err = renameio.WriteFile(s.cache, append(b, '\n'), 0o600)
		}
	}
	if err != nil {
		s.log.Warn("writing the MCP tool cache", "file", s.cache, "err", err)
	}
}

func keys[V any](m map[string]V) map[string]bool {
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}
