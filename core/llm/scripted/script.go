package scripted

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Defaults for the fields a script may leave out.
const (
	DefaultModel         = "scripted"
	DefaultEmbedModel    = "scripted-embed"
	DefaultEmbedDims     = 384
	DefaultContextLength = 32768
	DefaultChunkSize     = 8 // runes per streamed chunk, about two tokens
	DefaultBytesPerToken = 4.0
)

// Script is what the server answers, in order: the first chat request gets
// Replies[0], the second Replies[1], and so on. A request after the last reply
// gets an error saying the script ran out.
type Script struct {
	// Source names the script in errors (a file path, or any label).
	Source string
	// Model is the chat model the server pretends to have; DefaultModel if "".
	Model string
	// EmbedModel is the embedding model it pretends to have; DefaultEmbedModel if "".
	EmbedModel string
	// EmbedDims is the length of embedding vectors; DefaultEmbedDims if 0.
	EmbedDims int
	// ContextLength is the trained context /api/show reports; DefaultContextLength if 0.
	ContextLength int
	// BytesPerToken is the scripted tokenizer: a message costs 4 tokens plus
	// its bytes divided by this, rounded up (DefaultBytesPerToken when 0). A
	// value below the client's first estimate plays a model whose tokenizer
	// splits finer than expected.
	BytesPerToken float64
	// APIKey, when set, is the bearer token the OpenAI-compatible server
	// demands (HTTP 401 without it); the Ollama server ignores it.
	APIKey string
	// Replies are the model's replies, one per chat request.
	Replies []Reply
	// Choose, when set, makes the OpenAI-compatible server's reply depend on
	// the request: request i (from 0) gets Choose's reply instead of
	// Replies[i], and ok false answers as when the replies have run out. For
	// scripts built in code (a measuring harness whose agents offer different
	// tools); the Ollama server ignores it.
	Choose func(req OpenAIRequest, i int) (reply Reply, ok bool)
}

// Faults a reply can play on the OpenAI-compatible server.
const (
	// FaultNoDone ends the stream after the last chunk without [DONE].
	FaultNoDone = "no_done"
	// FaultNoStream answers a streaming request with one JSON object.
	FaultNoStream = "no_stream"
)

// Reply is one scripted model reply.
type Reply struct {
	// Content is the reply text, streamed in chunks.
	Content string
	// Thinking is reasoning text, streamed before the content.
	Thinking string
	// ToolCalls are native tool calls, sent after the text.
	ToolCalls []ToolCall
	// ChunkSize is the number of runes per streamed chunk; DefaultChunkSize if 0.
	ChunkSize int
	// Delay is the pause before every chunk after the first, to make a
	// stream long enough to interrupt.
	Delay time.Duration
	// ExpectContains, when set, must occur in the last message from the user
	// side (role user or tool) of the request; otherwise the server answers
	// with an error naming this reply and records a failure.
	ExpectContains string
	// ExpectInRequest, when set, must occur in some message of the request
	// (the system prompt, the history, the prompt blocks), wherever the host
	// put it; otherwise the server answers with an error as for ExpectContains.
	ExpectInRequest string
	// DoneReason is the final done_reason; "stop" if "". Use "length" to
	// play a reply cut off by the output limit.
	DoneReason string
	// Error, when set, is answered instead of a reply, as an error with HTTP
	// status Status (500 if 0), to play a failing server; status 429 plays a
	// rate limit.
	Error  string
	Status int
	// Fault plays a broken OpenAI-compatible server: FaultNoDone or
	// FaultNoStream (the Ollama server ignores it).
	Fault string
	// Hang, when set, answers nothing until the client gives up (a model that
	// never returns); the request is logged like any other.
	Hang bool
	// Line is the line of the reply in its script file, 0 when built in code.
	Line int
}

// ToolCall is one scripted native tool call.
type ToolCall struct {
	Name string
	// Arguments is a JSON object; nil means {}.
	Arguments json.RawMessage
}

// where names reply i in errors: "hello.yaml: replies[1] (line 9)".
func (s *Script) where(i int) string {
	w := fmt.Sprintf("replies[%d]", i)
	if s.Source != "" {
		w = s.Source + ": " + w
	}
	if i < len(s.Replies) && s.Replies[i].Line > 0 {
		w += fmt.Sprintf(" (line %d)", s.Replies[i].Line)
	}
	return w
}

// withDefaults fills unset fields and checks every reply, naming the bad one.
func (s Script) withDefaults() (Script, error) {
	if s.Model == "" {
		s.Model = DefaultModel
	}
	if s.EmbedModel == "" {
		s.EmbedModel = DefaultEmbedModel
	}
	if s.EmbedDims == 0 {
		s.EmbedDims = DefaultEmbedDims
	}
	if s.ContextLength == 0 {
		s.ContextLength = DefaultContextLength
	}
	if s.BytesPerToken == 0 {
		s.BytesPerToken = DefaultBytesPerToken
	}
	label := s.Source
	if label == "" {
		label = "script"
	}
	switch {
	case canonical(s.Model) == canonical(s.EmbedModel):
		return s, fmt.Errorf("%s: model and embed_model are both %q; give them different names", label, s.Model)
	case s.EmbedDims < 0 || s.EmbedDims > 65536:
		return s, fmt.Errorf("%s: embed_dims %d: want 1 to 65536", label, s.EmbedDims)
	case s.ContextLength < 0:
		return s, fmt.Errorf("%s: context_length %d: want a positive number", label, s.ContextLength)
	case s.BytesPerToken < 1 || s.BytesPerToken > 16:
		return s, fmt.Errorf("%s: bytes_per_token %v: want 1 to 16", label, s.BytesPerToken)
	}
	s.Replies = slices.Clone(s.Replies)
	var errs []error
	for i := range s.Replies {
		r := &s.Replies[i]
		if r.ChunkSize == 0 {
			r.ChunkSize = DefaultChunkSize
		}
		if r.DoneReason == "" {
			r.DoneReason = "stop"
		}
		var problems []string
		if r.Content == "" && r.Thinking == "" && len(r.ToolCalls) == 0 && r.Error == "" && !r.Hang {
			problems = append(problems, "empty: give content, thinking, tool_calls or error")
		}
		if r.ChunkSize < 0 {
			problems = append(problems, fmt.Sprintf("chunk_size %d: want a positive number", r.ChunkSize))
		}
		if r.Delay < 0 {
			problems = append(problems, fmt.Sprintf("delay %v: want zero or more", r.Delay))
		}
		if r.Status != 0 && (r.Status < 400 || r.Status > 599) {
			problems = append(problems, fmt.Sprintf("status %d: want an HTTP error status, 400 to 599", r.Status))
		}
		if r.Status != 0 && r.Error == "" {
			problems = append(problems, "status without error: give the error message too")
		}
		if r.Fault != "" && r.Fault != FaultNoDone && r.Fault != FaultNoStream {
			problems = append(problems, fmt.Sprintf("fault %q: want %s or %s", r.Fault, FaultNoDone, FaultNoStream))
		}
		if r.DoneReason != "stop" && r.DoneReason != "length" {
			problems = append(problems, fmt.Sprintf("done_reason %q: want stop or length", r.DoneReason))
		}
		for j, tc := range r.ToolCalls {
			if strings.TrimSpace(tc.Name) == "" {
				problems = append(problems, fmt.Sprintf("tool_calls[%d]: no name", j))
			}
			if len(tc.Arguments) > 0 {
				var obj map[string]json.RawMessage
				if err := json.Unmarshal(tc.Arguments, &obj); err != nil || obj == nil {
					problems = append(problems, fmt.Sprintf("tool_calls[%d] %s: arguments must be an object", j, tc.Name))
				}
			}
		}
		for _, p := range problems {
			errs = append(errs, fmt.Errorf("%s: %s", s.where(i), p))
		}
	}
	return s, errors.Join(errs...)
}

// LoadScript reads a script from a YAML or JSON file:
//
//	model: scripted            # optional, the chat model's name
//	replies:
//	  - content: '{"thoughts": ["..."], "tool_name": "response", "tool_args": {"text": "hi"}}'
//	    chunk_size: 4          # optional
//	    delay: 50ms            # optional, before each chunk after the first
//	    expect_contains: hello # optional, checked against the last user message
//	    expect_in_request: note # optional, checked against every message of the request
//	  - tool_calls:
//	      - name: memory_load
//	        arguments: {query: "notes"}
//
// Other optional keys: embed_model, embed_dims, context_length,
// bytes_per_token and api_key at the top; thinking, done_reason, error,
// status, fault and hang in a reply. Unknown keys are errors, and
// every error names the file, the reply and its line.
func LoadScript(path string) (Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Script{}, fmt.Errorf("reading script: %w", err)
	}
	s, err := ParseScript(path, data)
	if err != nil {
		return Script{}, err
	}
	return s, nil
}

// ParseScript reads a script from data; source names it in errors.
func ParseScript(source string, data []byte) (Script, error) {
	fail := func(line int, format string, args ...any) error {
		msg := fmt.Sprintf(format, args...)
		if line > 0 {
			return fmt.Errorf("%s: line %d: %s", source, line, msg)
		}
		return fmt.Errorf("%s: %s", source, msg)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return Script{}, fmt.Errorf("%s: %w", source, err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return Script{}, fail(0, "empty script: want a mapping with a replies: list")
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode {
		return Script{}, fail(top.Line, "want a mapping with a replies: list at the top")
	}
	s := Script{Source: source}
	var repliesNode *yaml.Node
	err := eachKey(top, []string{"model", "embed_model", "embed_dims", "context_length", "bytes_per_token", "api_key", "replies"}, func(key string, v *yaml.Node) error {
		switch key {
		case "model":
			return v.Decode(&s.Model)
		case "embed_model":
			return v.Decode(&s.EmbedModel)
		case "embed_dims":
			return v.Decode(&s.EmbedDims)
		case "context_length":
			return v.Decode(&s.ContextLength)
		case "bytes_per_token":
			return v.Decode(&s.BytesPerToken)
		case "api_key":
			return v.Decode(&s.APIKey)
		case "replies":
			repliesNode = v
		}
		return nil
	})
	if err != nil {
		return Script{}, fmt.Errorf("%s: %w", source, err)
	}
	if repliesNode == nil {
		return Script{}, fail(top.Line, "no replies: list")
	}
	if repliesNode.Kind != yaml.SequenceNode {
		return Script{}, fail(repliesNode.Line, "replies: want a list")
	}
	for i, item := range repliesNode.Content {
		r, err := parseReply(item)
		if err != nil {
			return Script{}, fmt.Errorf("%s: replies[%d] (line %d): %w", source, i, item.Line, err)
		}
		s.Replies = append(s.Replies, r)
	}
	return s.withDefaults()
}

func parseReply(n *yaml.Node) (Reply, error) {
	if n.Kind != yaml.MappingNode {
		return Reply{}, errors.New("want a mapping with content, tool_calls, ...")
	}
	r := Reply{Line: n.Line}
	err := eachKey(n, []string{"content", "thinking", "tool_calls", "chunk_size", "delay", "expect_contains", "expect_in_request", "done_reason", "error", "status", "fault", "hang"}, func(key string, v *yaml.Node) error {
		switch key {
		case "content":
			return v.Decode(&r.Content)
		case "thinking":
			return v.Decode(&r.Thinking)
		case "chunk_size":
			return v.Decode(&r.ChunkSize)
		case "expect_contains":
			return v.Decode(&r.ExpectContains)
		case "expect_in_request":
			return v.Decode(&r.ExpectInRequest)
		case "done_reason":
			return v.Decode(&r.DoneReason)
		case "error":
			return v.Decode(&r.Error)
		case "hang":
			return v.Decode(&r.Hang)
		case "status":
			return v.Decode(&r.Status)
		case "fault":
			return v.Decode(&r.Fault)
		case "delay":
			var text string
			if err := v.Decode(&text); err != nil {
				return err
			}
			d, err := time.ParseDuration(text)
			if err != nil {
				return fmt.Errorf("line %d: delay %q: want a duration such as 50ms or 1s", v.Line, text)
			}
			r.Delay = d
		case "tool_calls":
			if v.Kind != yaml.SequenceNode {
				return fmt.Errorf("line %d: tool_calls: want a list", v.Line)
			}
			for j, c := range v.Content {
				tc, err := parseToolCall(c)
				if err != nil {
					return fmt.Errorf("tool_calls[%d] (line %d): %w", j, c.Line, err)
				}
				r.ToolCalls = append(r.ToolCalls, tc)
			}
		}
		return nil
	})
	return r, err
}

func parseToolCall(n *yaml.Node) (ToolCall, error) {
	if n.Kind != yaml.MappingNode {
		return ToolCall{}, errors.New("want a mapping with name and arguments")
	}
	var tc ToolCall
	err := eachKey(n, []string{"name", "arguments"}, func(key string, v *yaml.Node) error {
		switch key {
		case "name":
			return v.Decode(&tc.Name)
		case "arguments":
			if v.Kind != yaml.MappingNode {
				return fmt.Errorf("line %d: arguments: want a mapping", v.Line)
			}
			var b bytes.Buffer
			if err := nodeJSON(&b, v); err != nil {
				return err
			}
			tc.Arguments = b.Bytes()
		}
		return nil
	})
	return tc, err
}

// eachKey calls fn for each key of mapping n, refusing keys not in allowed so
// a misspelt key is reported instead of ignored.
func eachKey(n *yaml.Node, allowed []string, fn func(key string, v *yaml.Node) error) error {
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !slices.Contains(allowed, k.Value) {
			return fmt.Errorf("line %d: unknown key %q (known: %s)", k.Line, k.Value, strings.Join(allowed, ", "))
		}
		if err := fn(k.Value, v); err != nil {
			var te *yaml.TypeError
			if errors.As(err, &te) {
				return fmt.Errorf("line %d: %s: %s", v.Line, k.Value, strings.Join(te.Errors, "; "))
			}
			return err
		}
	}
	return nil
}

// nodeJSON writes a YAML node as JSON, keeping the order of mapping keys (a
// Go map would sort them, and argument order is part of what a model wrote).
func nodeJSON(b *bytes.Buffer, n *yaml.Node) error {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 1 {
			return nodeJSON(b, n.Content[0])
		}
	case yaml.AliasNode:
		return nodeJSON(b, n.Alias)
	case yaml.MappingNode:
		b.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			if i > 0 {
				b.WriteByte(',')
			}
			key, err := json.Marshal(n.Content[i].Value)
			if err != nil {
				return err
			}
			b.Write(key)
			b.WriteByte(':')
			if err := nodeJSON(b, n.Content[i+1]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
		return nil
	case yaml.SequenceNode:
		b.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := nodeJSON(b, c); err != nil {
				return err
			}
		}
		b.WriteByte(']')
		return nil
	case yaml.ScalarNode:
		var v any
		if err := n.Decode(&v); err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		out, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("line %d: value %q has no JSON form", n.Line, n.Value)
		}
		b.Write(out)
		return nil
	}
	return fmt.Errorf("line %d: unsupported YAML value", n.Line)
}
