package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/exocortex/exocortex/toolsettings"
)

// MCPServersAt are the MCP servers the agent uses: mcp_servers_file's (a
// relative path starts at home, ~ at the user's home directory), then
// mcp_servers' over them, disabled ones left out. problems say what was left
// out and why (an unreadable file, an entry without command or url), each
// naming the server or the file; the rest still load.
func (c Config) MCPServersAt(home string) (servers map[string]toolsettings.MCPServer, problems []string) {
	servers = map[string]toolsettings.MCPServer{}
	if path := c.MCPServersFile; path != "" {
		if rest, ok := strings.CutPrefix(path, "~/"); ok {
			if uh, err := os.UserHomeDir(); err == nil {
				path = filepath.Join(uh, rest)
			}
		}
		path = toolsettings.Under(home, path)
		fromFile, err := toolsettings.ReadMCPServersFile(path)
		if err != nil {
			problems = append(problems, err.Error())
		}
		for n, s := range fromFile {
			servers[n] = s
		}
	}
	for n, s := range c.MCPServers {
		servers[n] = s
	}
	for _, n := range toolsettings.MCPNames(servers) {
		s := servers[n]
		switch err := s.Check(); {
		case s.Disabled:
			delete(servers, n)
		case strings.ContainsAny(n, " .\t"):
			problems = append(problems, fmt.Sprintf("MCP server %q: the name may not hold spaces or dots (its tools are named %s.TOOL)", n, n))
			delete(servers, n)
		case err != nil:
			problems = append(problems, fmt.Sprintf("MCP server %q: %v", n, err))
			delete(servers, n)
		}
	}
	return servers, problems
}
