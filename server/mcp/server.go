// Package mcpserver serves Exocortex's memory, wiring and (when config enables
// it) agent over the Model Context Protocol, with the official Go SDK
// (github.com/modelcontextprotocol/go-sdk): on stdio for `exocortex mcp`
// (desktop clients, IDEs) and as streamable HTTP routes that `exocortex serve`
// mounts at /mcp behind its API keys.
//
// Memory is reached through the home's memory service
// (exocortexv1.MemoryServiceClient, package memory/service), so the server runs
// while a terminal session or `exocortex memory serve` owns the same home.
//
// Tools: search_memory, compile_memory, why, ECHOMEN's memory_save,
// memory_retrieve and memory_delete (the memory service's tool contract, the
// same strings the agent's memory tools answer), wiring, and, with an
// [Agent], Agent Zero's send_message and finish_chat. Resources: every memory
// record (exocortex://memory/{id}), the memory snapshot, WIRING.md and the
// sessions; the journal's events become resources/list_changed and
// resources/updated notifications for subscribed clients.
package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/exocortex/exocortex/core/session"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/server/route"
	"github.com/exocortex/exocortex/wiring"
)

// DefaultMaxResultBytes bounds a tool's result when Options.MaxResultBytes is 0.
const DefaultMaxResultBytes = 1 << 20

// Name is the server's name in the initialize handshake.
const Name = "exocortex"

// Options configure a Server.
type Options struct {
	// Memory is the home's memory service; required.
	Memory exocortexv1.MemoryServiceClient
	// Wiring loads the current wiring model (nil: the wiring tool says it is
	// not available).
	Wiring func(ctx context.Context) (*wiring.Model, error)
	// WiringDoc returns WIRING.md (nil: no WIRING.md resource).
	WiringDoc func(ctx context.Context) ([]byte, error)
	// SessionsDir holds the home's sessions ("" : no sessions resource).
	SessionsDir string
	// ListSessions, when set, lists the sessions instead of SessionsDir's
	// files (the shared bucket when the memory journal is on NATS).
	ListSessions func(context.Context) ([]session.Info, error)
	// Agent, when set, adds send_message and finish_chat.
	Agent Agent
	// MaxResultBytes bounds a tool result; a larger one is reported as an
	// error naming the size and the limit, never cut (0: DefaultMaxResultBytes).
	MaxResultBytes int
	// Version is the server's version in the handshake.
	Version string
	Logger  *slog.Logger
}

// Server is the MCP server. One Server serves stdio and HTTP sessions alike.
type Server struct {
	opts Options
	log  *slog.Logger
	// full has every tool; reader leaves out the tools that write memory, for
	// HTTP callers whose API key has the agent role only.
	full, reader *mcp.Server

	mu sync.Mutex
	// listed are the memory records registered as resources, by id.
	listed map[string]bool
}

// New builds the server and registers its tools and resources. Call Watch to
// follow the journal for notifications.
func New(opts Options) (*Server, error) {
	if opts.Memory == nil {
		return nil, errors.New("mcpserver: no memory service (Options.Memory)")
	}
	if opts.MaxResultBytes <= 0 {
		opts.MaxResultBytes = DefaultMaxResultBytes
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Version == "" {
		opts.Version = "dev"
	}
	s := &Server{opts: opts, log: opts.Logger, listed: map[string]bool{}}
	s.full = s.build(true)
	s.reader = s.build(false)
	return s, nil
}

func (s *Server) build(writes bool) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: Name, Title: "Exocortex memory and agent", Version: s.opts.Version}, &mcp.ServerOptions{
		Instructions: "Exocortex's long-term memory: search_memory finds records and says why each matched, compile_memory " +
			"gives the block the agent would receive for a query, why explains one record's provenance and history. " +
			"Records are resources at exocortex://memory/{id}; subscribe to be told when one changes.",
		Logger:             s.log,
		SubscribeHandler:   s.subscribe,
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
		Capabilities: &mcp.ServerCapabilities{
			Tools:     &mcp.ToolCapabilities{ListChanged: true},
			Resources: &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true},
		},
	})
	s.addTools(srv, writes)
	s.addResources(srv)
	return srv
}

// Servers returns the underlying servers, the full one first (tests, and the
// notifications).
func (s *Server) servers() []*mcp.Server { return []*mcp.Server{s.full, s.reader} }

// Run serves one client on t (mcp.StdioTransport for `exocortex mcp`) until
// the client goes or ctx ends.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	return s.full.Run(ctx, t)
}

// Handler is the streamable HTTP transport. Behind serve's authentication a
// caller whose key has the agent role gets the tools that only read; an
// admin, or a request that did not pass through serve (a test), gets all.
func (s *Server) Handler() http.Handler {
	return mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		if c, ok := route.CallerFrom(r.Context()); ok && !c.Role.Allows(route.Admin) {
			return s.reader
		}
		return s.full
	}, &mcp.StreamableHTTPOptions{Logger: s.log})
}

// Routes are the server as a surface of `exocortex serve`: /mcp, streamed.
func (s *Server) Routes() []route.Route {
	return []route.Route{{
		Pattern: "/mcp", Role: route.Agent, Stream: true, Handler: s.Handler(),
		Summary: "Model Context Protocol (streamable HTTP): memory search, compile, why, ECHOMEN's memory tools, wiring; write tools need an admin key",
	}}
}

// result is a tool's answer as text plus its structured output, refused when
// over the size limit.
func (s *Server) result(tool, text string, out any) (*mcp.CallToolResult, error) {
	n := len(text)
	if out != nil {
		b, err := json.Marshal(out)
		if err != nil {
			return nil, fmt.Errorf("%s: encoding the result: %w", tool, err)
		}
		n = max(n, len(b))
	}
	if n > s.opts.MaxResultBytes {
		return nil, &TooLargeError{Tool: tool, Size: n, Limit: s.opts.MaxResultBytes}
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
}

// TooLargeError is a result over Options.MaxResultBytes.
type TooLargeError struct {
	Tool        string
	Size, Limit int
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s: the result is %d bytes, over the limit of %d bytes (mcp.max_result_bytes): ask for less "+
		"(a smaller k or token_budget, a narrower query) or raise the limit; nothing was cut", e.Tool, e.Size, e.Limit)
}

// MemoryClient is the memory service the server reaches.
type MemoryClient = exocortexv1.MemoryServiceClient
