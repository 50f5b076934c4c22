package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/exocortex/exocortex/core/loop"
	mcpserver "github.com/exocortex/exocortex/server/mcp"
)

// errNoAnswer is what an MCP chat's approver answers: the client cannot be
// asked, so a held call is refused, with what would let it run.
var errNoAnswer = errors.New("an MCP client cannot answer approvals, so the call was refused and did not run " +
	"(mcp.approval in config.yaml: auto-edit lets text_editor writes run, yolo every held call but the ones outside the sandbox)")

// mcpAgent runs the agent for send_message and finish_chat: each chat is a
// runtime (host, model, session mcp-ID) under mcp.approval; a held tool call
// is refused with the reason, never run unasked.
type mcpAgent struct {
	a     *app
	mu    sync.Mutex
	chats map[string]*mcpChat
}

type mcpChat struct {
	mu sync.Mutex // one message at a time
	r  *runtime
}

func newMCPAgent(a *app) *mcpAgent { return &mcpAgent{a: a, chats: map[string]*mcpChat{}} }

func (m *mcpAgent) Send(ctx context.Context, msg mcpserver.Message) (string, string, error) {
	id := msg.ChatID
	m.mu.Lock()
	c := m.chats[id]
	m.mu.Unlock()
	if id != "" && c == nil {
		return "", "", fmt.Errorf("chat %q: %w (it finished, or was not persistent; leave chat_id out to start one)", id, mcpserver.ErrUnknownChat)
	}
	if c == nil {
		b := make([]byte, 6)
		_, _ = rand.Read(b)
		id = "mcp-" + hex.EncodeToString(b)
		f := agentFlags{approval: m.a.cfg.MCP.Approval}
		refuse := loop.ApproverFunc(func(context.Context, loop.Approval) (loop.Decision, error) { return loop.Deny, errNoAnswer })
		r, err := m.a.start(ctx, &f, id, nil, refuse)
		if err != nil {
			return "", "", fmt.Errorf("starting the agent for chat %s: %w", id, err)
		}
		c = &mcpChat{r: r}
		if msg.PersistentChat {
			m.mu.Lock()
			m.chats[id] = c
			m.mu.Unlock()
		} else {
			defer r.close()
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	text := msg.Message
	if len(msg.Attachments) > 0 {
		text += "\n\nAttachments:\n- " + strings.Join(msg.Attachments, "\n- ")
	}
	res, err := c.r.agent.Monologue(ctx, text)
	if err != nil {
		return "", id, err
	}
	return res.Response, id, nil
}

func (m *mcpAgent) Finish(_ context.Context, id string) error {
	m.mu.Lock()
	c := m.chats[id]
	delete(m.chats, id)
	m.mu.Unlock()
	if c == nil {
		return mcpserver.ErrUnknownChat
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.r.close()
	return nil
}

// close ends every chat.
func (m *mcpAgent) close() {
	m.mu.Lock()
	chats := m.chats
	m.chats = map[string]*mcpChat{}
	m.mu.Unlock()
	for _, c := range chats {
		c.mu.Lock()
		c.r.close()
		c.mu.Unlock()
	}
}
