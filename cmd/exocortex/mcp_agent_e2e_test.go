package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/exocortex/exocortex/sdk/sdktest"
)

// TestMCPSendMessageRefusesHeldCalls: with mcp.agent on, an MCP client (the Go
// SDK, starting `exocortex mcp` as a desktop client does) runs the agent with
// send_message in a persistent chat; the scripted model's tier-4 command is
// held by the action boundary and refused with the reason (an MCP client
// cannot answer approvals), the agent answers, finish_chat ends the chat, and
// a finished chat is refused by name.
func TestMCPSendMessageRefusesHeldCalls(t *testing.T) {
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	home := serviceHome(t)
	canary := filepath.Join(home, "canary")
	if err := os.WriteFile(canary, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	call, _ := json.Marshal(map[string]any{"thoughts": []string{"clean up"}, "headline": "cleaning", "tool_name": "code_execution",
		"tool_args": map[string]any{"runtime": "terminal", "code": "sudo rm -rf " + canary}})
	final, _ := json.Marshal(map[string]any{"thoughts": []string{"done"}, "tool_name": "response", "tool_args": map[string]any{"text": "The clean-up was not allowed."}})
	script, _ := json.Marshal(map[string]any{"model": "mcp", "replies": []map[string]any{{"content": string(call)}, {"content": string(final)}}})
	scriptFile := filepath.Join(home, "script.yaml")
	if err := os.WriteFile(scriptFile, script, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte("mcp:\n  agent: true\n  approval: default\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.Command(exe, "mcp")
	cmd.Env = append(os.Environ(), "EXOCORTEX_HOME="+home, "EXOCORTEX_MODEL=script:"+scriptFile)
	cmd.Dir = home
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "send_message", Arguments: map[string]any{"message": "Clean up my files.", "persistent_chat": true}})
	if err != nil {
		t.Fatal(err)
	}
	var reply struct{ Status, Response, ChatID string }
	b, _ := json.Marshal(res.StructuredContent)
	_ = json.Unmarshal(b, &struct {
		Status   *string `json:"status"`
		Response *string `json:"response"`
		ChatID   *string `json:"chat_id"`
	}{&reply.Status, &reply.Response, &reply.ChatID})
	if res.IsError || reply.Status != "success" || reply.Response != "The clean-up was not allowed." || !strings.HasPrefix(reply.ChatID, "mcp-") {
		t.Fatalf("send_message = %+v (%s)", reply, b)
	}
	if got, err := os.ReadFile(canary); err != nil || string(got) != "keep me" {
		t.Fatalf("the held command ran: %q %v", got, err)
	}
	sess, err := os.ReadFile(filepath.Join(home, "sessions", reply.ChatID+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(sess), "an MCP client cannot answer approvals") {
		t.Errorf("the session %s does not give the refusal's reason:\n%s", reply.ChatID, sess)
	}
	finish := func() *mcp.CallToolResult {
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "finish_chat", Arguments: map[string]any{"chat_id": reply.ChatID}})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := finish(); r.IsError {
		t.Fatalf("finish_chat: %+v", r.Content)
	}
	if r := finish(); !r.IsError || !strings.Contains(r.Content[0].(*mcp.TextContent).Text, reply.ChatID) {
		t.Errorf("finishing a finished chat: %+v", r.Content)
	}
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "send_message", Arguments: map[string]any{"message": "again", "chat_id": reply.ChatID}})
	if err != nil || !r.IsError || !strings.Contains(r.Content[0].(*mcp.TextContent).Text, "leave chat_id out") {
		t.Errorf("a message to a finished chat: %v %+v", err, r)
	}
}
