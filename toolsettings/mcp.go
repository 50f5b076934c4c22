package toolsettings

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// MCPServer is one MCP server the agent uses the tools of, in the shape
// Claude Desktop, Cursor and Agent Zero write (an mcpServers entry): a
// command started on stdio, or a remote url (serverUrl) with headers.
type MCPServer struct {
	// Command and Args start a stdio server; Env is added to its environment.
	Command string            `yaml:"command" json:"command,omitempty"`
	Args    []string          `yaml:"args" json:"args,omitempty"`
	Env     map[string]string `yaml:"env" json:"env,omitempty"`
	// URL (or ServerURL, Agent Zero's spelling) names a remote server.
	URL       string            `yaml:"url" json:"url,omitempty"`
	ServerURL string            `yaml:"serverUrl" json:"serverUrl,omitempty"`
	Headers   map[string]string `yaml:"headers" json:"headers,omitempty"`
	// Type is stdio, sse, or streamable-http (http); empty: stdio with a
	// command, streamable HTTP with a url.
	Type string `yaml:"type" json:"type,omitempty"`
	// InitTimeout bounds the start and the initialize handshake; ToolTimeout
	// one tool call (seconds, or a duration such as 30s).
	InitTimeout Seconds `yaml:"init_timeout" json:"init_timeout,omitempty"`
	ToolTimeout Seconds `yaml:"tool_timeout" json:"tool_timeout,omitempty"`
	Disabled    bool    `yaml:"disabled" json:"disabled,omitempty"`
}

// Default MCP timeouts. The init timeout is bounded by MaxMCPInitTimeout: the
// plugin declares its tools when it starts, within the host's start-up time.
const (
	DefaultMCPInitTimeout = 5 * time.Second
	MaxMCPInitTimeout     = 8 * time.Second
	DefaultMCPToolTimeout = 60 * time.Second
)

// Endpoint is the server's URL, whichever key gave it.
func (s MCPServer) Endpoint() string {
	if s.URL != "" {
		return s.URL
	}
	return s.ServerURL
}

// Transport is "stdio", "sse" or "streamable-http".
func (s MCPServer) Transport() string {
	switch strings.ToLower(s.Type) {
	case "sse":
		return "sse"
	case "http", "streamable-http", "streamable_http", "streamablehttp":
		return "streamable-http"
	case "stdio":
		return "stdio"
	}
	if s.Command == "" && s.Endpoint() != "" {
		return "streamable-http"
	}
	return "stdio"
}

// Init is the init timeout, defaulted and bounded.
func (s MCPServer) Init() time.Duration {
	d := s.InitTimeout.Duration()
	if d <= 0 {
		d = DefaultMCPInitTimeout
	}
	return min(d, MaxMCPInitTimeout)
}

// Tool is the tool timeout, defaulted.
func (s MCPServer) Tool() time.Duration {
	if d := s.ToolTimeout.Duration(); d > 0 {
		return d
	}
	return DefaultMCPToolTimeout
}

// Check says what is wrong with the entry, naming the field.
func (s MCPServer) Check() error {
	t := strings.ToLower(s.Type)
	switch t {
	case "", "stdio", "sse", "http", "streamable-http", "streamable_http", "streamablehttp":
	default:
		return fmt.Errorf("type %q is not a transport: use stdio, sse or streamable-http", s.Type)
	}
	switch {
	case s.Command == "" && s.Endpoint() == "":
		return errors.New("neither command nor url is set: give command (and args) for a local server, or url for a remote one")
	case s.Transport() == "stdio" && s.Command == "":
		return errors.New("type stdio needs a command")
	case s.Transport() != "stdio" && s.Endpoint() == "":
		return fmt.Errorf("type %s needs a url", s.Type)
	case s.InitTimeout < 0 || s.ToolTimeout < 0:
		return errors.New("init_timeout and tool_timeout must be 0 or more seconds")
	}
	return nil
}

// Seconds is a timeout written as a number of seconds (as Agent Zero and the
// desktop clients write it) or a duration string ("30s", "2m").
type Seconds float64

// Duration is s as a time.Duration.
func (s Seconds) Duration() time.Duration { return time.Duration(float64(s) * float64(time.Second)) }

func (s *Seconds) parse(v string) error {
	v = strings.TrimSpace(v)
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		*s = Seconds(f)
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return fmt.Errorf("%q is not a timeout: write seconds (30) or a duration (30s, 2m)", v)
	}
	*s = Seconds(d.Seconds())
	return nil
}

// UnmarshalYAML reads 30, 2.5 or "30s".
func (s *Seconds) UnmarshalYAML(n *yaml.Node) error { return s.parse(n.Value) }

// UnmarshalJSON reads 30, 2.5 or "30s".
func (s *Seconds) UnmarshalJSON(b []byte) error {
	var str string
	if json.Unmarshal(b, &str) == nil {
		return s.parse(str)
	}
	return s.parse(string(b))
}

// MCPServersFile is the JSON file Claude Desktop and Cursor write: a top-level
// mcpServers object of name -> MCPServer.
type MCPServersFile struct {
	MCPServers map[string]MCPServer `json:"mcpServers"`
}

// ReadMCPServersFile reads path's mcpServers; a file without it is an error
// saying so.
func ReadMCPServersFile(path string) (map[string]MCPServer, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("mcp_servers_file %s: %w", path, err)
	}
	var f MCPServersFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("mcp_servers_file %s is not JSON with a top-level mcpServers object: %w", path, err)
	}
	if f.MCPServers == nil {
		return nil, fmt.Errorf(`mcp_servers_file %s has no top-level "mcpServers" object (the shape Claude Desktop writes: {"mcpServers": {"NAME": {"command": ...}}})`, path)
	}
	return f.MCPServers, nil
}

// MCPNames are the servers' names, sorted.
func MCPNames(m map[string]MCPServer) []string {
	out := make([]string, 0, len(m))
	for n := range m {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
