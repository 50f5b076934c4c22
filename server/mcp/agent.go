package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Agent runs the agent for send_message and finish_chat (Agent Zero's MCP
// tools). The command builds it when config enables it (mcp.agent: true).
type Agent interface {
	// Send runs one monologue for message in the chat (a new one when chatID
	// is empty) and answers the agent's response and the chat's id. Tool
	// calls the approval mode holds are refused with the reason, never run.
	Send(ctx context.Context, m Message) (response, chatID string, err error)
	// Finish ends the chat.
	Finish(ctx context.Context, chatID string) error
}

// Message is send_message's input.
type Message struct {
	Message     string   `json:"message" jsonschema:"the message for the agent"`
	Attachments []string `json:"attachments,omitempty" jsonschema:"paths or URLs of files the agent should look at"`
	ChatID      string   `json:"chat_id,omitempty" jsonschema:"continue this chat (from an earlier answer); empty starts one"`
	// PersistentChat keeps the chat for later messages; without it the chat
	// ends after this answer.
	PersistentChat bool `json:"persistent_chat,omitempty" jsonschema:"keep the chat for later messages (default: it ends after the answer)"`
}

// Reply is send_message's output (Agent Zero's shape).
type Reply struct {
	Status   string `json:"status" jsonschema:"success or error"`
	Response string `json:"response"`
	ChatID   string `json:"chat_id"`
}

// FinishIn is finish_chat's input.
type FinishIn struct {
	ChatID string `json:"chat_id" jsonschema:"the chat to end"`
}

// ErrUnknownChat is Finish's error for a chat it does not have.
var ErrUnknownChat = errors.New("no such chat")

func (s *Server) addAgentTools(srv *mcp.Server) {
	mcp.AddTool(srv, &mcp.Tool{Name: "send_message", Title: "Send a message to the agent",
		Description: "Run Exocortex's agent on a message and return its response; tool calls that need approval are refused with the reason."}, s.sendMessage)
	mcp.AddTool(srv, &mcp.Tool{Name: "finish_chat", Title: "Finish a chat",
		Description: "End a persistent chat started by send_message."}, s.finishChat)
}

func (s *Server) sendMessage(ctx context.Context, _ *mcp.CallToolRequest, in Message) (*mcp.CallToolResult, Reply, error) {
	if strings.TrimSpace(in.Message) == "" {
		return nil, Reply{}, &Invalid{"send_message", "message", "is empty: give the agent a message"}
	}
	resp, chat, err := s.opts.Agent.Send(ctx, in)
	if err != nil {
		return nil, Reply{}, fmt.Errorf("send_message: %w", err)
	}
	out := Reply{Status: "success", Response: resp, ChatID: chat}
	r, err := s.result("send_message", resp, out)
	return r, out, err
}

func (s *Server) finishChat(ctx context.Context, _ *mcp.CallToolRequest, in FinishIn) (*mcp.CallToolResult, TextOut, error) {
	if strings.TrimSpace(in.ChatID) == "" {
		return nil, TextOut{}, &Invalid{"finish_chat", "chat_id", "is empty: give the chat_id send_message answered"}
	}
	if err := s.opts.Agent.Finish(ctx, in.ChatID); err != nil {
		return nil, TextOut{}, fmt.Errorf("finish_chat: chat %q: %w", in.ChatID, err)
	}
	out := TextOut{Result: fmt.Sprintf("Chat %s finished.", in.ChatID)}
	r, err := s.result("finish_chat", out.Result, out)
	return r, out, err
}
