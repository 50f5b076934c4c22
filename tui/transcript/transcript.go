// Package transcript turns a session's history, the messages the agent loop
// saved, into what the operator reads: turns of a prompt, the steps the agent
// took (tool calls, their results, the core's corrections) and the answer.
// It also holds the session's thoughts apart, and writes and reads the two
// export formats.
//
// Thoughts come from the cohesion loop (an empty prompt, the ECE seed's "line
// of thought"): the agent reflects on its state and the reflection is kept in
// the session's context, but not in the transcript. A thought is a system
// message whose metadata has MetaThought; MetaThoughtOf names the instruction
// message that started the reflection, so the whole exchange (instruction,
// replies, tool calls) is left out of the turns by id, never by matching text.
//
// Exports: Markdown for people (turns, steps folded in <details>, thoughts in
// a last section) and JSON for machines (every message as protojson, metadata
// included), which ReadJSON reads back for /import.
package transcript

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/exocortex/exocortex/core/llm"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// Metadata keys on thought messages.
const (
	// MetaThought marks a thought; its value says which loop wrote it ("cohesion").
	MetaThought = "exocortex.thought"
	// MetaThoughtOf is the id of the message that asked for the thought.
	MetaThoughtOf = "exocortex.thought_of"
	// ThoughtSender is the sender of thought messages.
	ThoughtSender = "exocortex.cohesion"
)

// NewThought returns the message that keeps a reflection in the session.
func NewThought(instructionID, text string, now time.Time) *exocortexv1.Message {
	return &exocortexv1.Message{
		Id: uuid.NewString(), Role: "system", SenderId: ThoughtSender,
		Content:      "Thought (a reflection written on an empty prompt, not shown to the operator):\n" + strings.TrimSpace(text),
		TimestampUtc: now.UTC().Format(time.RFC3339Nano),
		Metadata:     map[string]string{MetaThought: "cohesion", MetaThoughtOf: instructionID},
	}
}

// IsThought reports whether m is a thought.
func IsThought(m *exocortexv1.Message) bool { return m.GetMetadata()[MetaThought] != "" }

// ThoughtText is the reflection a thought message carries.
func ThoughtText(m *exocortexv1.Message) string {
	_, text, ok := strings.Cut(m.GetContent(), ":\n")
	if !ok {
		return m.GetContent()
	}
	return text
}

// Step is one thing the agent did inside a turn.
type Step struct {
	Headline string
	Thoughts []string
	// Tool and Args (compact JSON) are set for a tool call.
	Tool string
	Args string
	// Result is the tool's result as the model saw it.
	Result    string
	HasResult bool
	// Signal and Note are set for a message the core added (a correction,
	// a blocked tool) or for a reply that held no usable tool call.
	Signal string
	Note   string
}

// Turn is one operator prompt and what followed it.
type Turn struct {
	Prompt *exocortexv1.Message
	Steps  []Step
	// Answer is the response tool's text ("" when the turn ended without one).
	Answer string
}

// Thought is one reflection.
type Thought struct {
	ID   string
	Text string
	Time time.Time
}

// Build groups msgs into turns and collects the thoughts. Messages before the
// first operator prompt (none, normally) are dropped.
func Build(msgs []*exocortexv1.Message) ([]Turn, []Thought) {
	var turns []Turn
	var thoughts []Thought
	hidden := map[string]bool{}
	for _, m := range msgs {
		if IsThought(m) {
			hidden[m.GetMetadata()[MetaThoughtOf]] = true
		}
	}
	skipping := false
	for _, m := range msgs {
		if IsThought(m) {
			ts, _ := time.Parse(time.RFC3339Nano, m.GetTimestampUtc())
			thoughts = append(thoughts, Thought{ID: m.GetId(), Text: ThoughtText(m), Time: ts})
			skipping = false
			continue
		}
		if isPrompt(m) {
			skipping = hidden[m.GetId()]
			if !skipping {
				turns = append(turns, Turn{Prompt: m})
			}
			continue
		}
		if skipping || len(turns) == 0 {
			continue
		}
		t := &turns[len(turns)-1]
		switch m.GetRole() {
		case "assistant":
			addReply(t, m.GetContent())
		case "tool":
			attachResult(t, m.GetToolName(), m.GetContent())
		default:
			t.Steps = append(t.Steps, Step{Signal: m.GetSignal(), Note: m.GetContent()})
		}
	}
	return turns, thoughts
}

// isPrompt reports whether m is the operator's: a user message that is not one
// the core added (those carry a signal or the core's sender).
func isPrompt(m *exocortexv1.Message) bool {
	if m.GetRole() != "user" || m.GetSignal() != "" {
		return false
	}
	s := m.GetSenderId()
	return s == "" || s == "operator"
}

func addReply(t *Turn, content string) {
	req, err := llm.ParseText(content)
	if err != nil {
		t.Steps = append(t.Steps, Step{Note: strings.TrimSpace(content)})
		return
	}
	if req.ToolName == "response" {
		var args struct {
			Text string `json:"text"`
		}
		if json.Unmarshal(req.ToolArgs, &args) == nil && args.Text != "" {
			t.Answer = args.Text
			if req.Headline != "" || len(req.Thoughts) > 0 {
				t.Steps = append(t.Steps, Step{Headline: req.Headline, Thoughts: req.Thoughts})
			}
			return
		}
	}
	t.Steps = append(t.Steps, Step{Headline: req.Headline, Thoughts: req.Thoughts, Tool: req.ToolName, Args: string(req.ToolArgs)})
}

func attachResult(t *Turn, tool, content string) {
	for i := len(t.Steps) - 1; i >= 0; i-- {
		s := &t.Steps[i]
		if s.Tool != "" && !s.HasResult && (tool == "" || s.Tool == tool) {
			s.Result, s.HasResult = content, true
			return
		}
	}
	t.Steps = append(t.Steps, Step{Tool: tool, Result: content, HasResult: true})
}

// Markdown renders the session for reading: every turn, the steps folded,
// and the thoughts at the end.
func Markdown(name string, msgs []*exocortexv1.Message, now time.Time) string {
	turns, thoughts := Build(msgs)
	var b strings.Builder
	fmt.Fprintf(&b, "# Exocortex session %s\n\n", name)
	fmt.Fprintf(&b, "Exported %s · %d turns · %d messages\n", now.UTC().Format("2006-01-02 15:04 UTC"), len(turns), len(msgs))
	for i, t := range turns {
		fmt.Fprintf(&b, "\n---\n\n## %d. Operator", i+1)
		if ts, err := time.Parse(time.RFC3339Nano, t.Prompt.GetTimestampUtc()); err == nil {
			fmt.Fprintf(&b, " · %s", ts.UTC().Format("2006-01-02 15:04"))
		}
		fmt.Fprintf(&b, "\n\n%s\n\n### Agent\n\n", strings.TrimSpace(t.Prompt.GetContent()))
		for _, s := range t.Steps {
			writeStep(&b, s)
		}
		if t.Answer != "" {
			fmt.Fprintf(&b, "%s\n", strings.TrimSpace(t.Answer))
		} else {
			b.WriteString("_(no answer)_\n")
		}
	}
	if len(thoughts) > 0 {
		b.WriteString("\n---\n\n## Thoughts (cohesion loop)\n")
		for _, th := range thoughts {
			fmt.Fprintf(&b, "\n- %s — %s\n", th.Time.UTC().Format("2006-01-02 15:04"), indent(strings.TrimSpace(th.Text), "  "))
		}
	}
	return b.String()
}

func writeStep(b *strings.Builder, s Step) {
	switch {
	case s.Tool != "":
		label := s.Tool
		if s.Headline != "" {
			label = s.Headline + " — " + s.Tool
		}
		fmt.Fprintf(b, "<details><summary>%s</summary>\n\n", escapeHTML(label))
		if len(s.Thoughts) > 0 {
			for _, th := range s.Thoughts {
				fmt.Fprintf(b, "> %s\n", th)
			}
			b.WriteString("\n")
		}
		fmt.Fprintf(b, "Arguments:\n\n%s\n\n", fence("json", s.Args))
		if s.HasResult {
			fmt.Fprintf(b, "Result:\n\n%s\n\n", fence("text", s.Result))
		}
		b.WriteString("</details>\n\n")
	case s.Signal != "" || s.Note != "":
		label := "note"
		if s.Signal != "" {
			label = "core: " + s.Signal
		}
		fmt.Fprintf(b, "<details><summary>%s</summary>\n\n%s\n\n</details>\n\n", escapeHTML(label), fence("text", s.Note))
	case len(s.Thoughts) > 0:
		for _, th := range s.Thoughts {
			fmt.Fprintf(b, "> %s\n", th)
		}
		b.WriteString("\n")
	}
}

// fence wraps s in a code fence longer than any backtick run inside it.
func fence(lang, s string) string {
	ticks := "```"
	for strings.Contains(s, ticks) {
		ticks += "`"
	}
	return ticks + lang + "\n" + strings.TrimRight(s, "\n") + "\n" + ticks
}

func indent(s, pad string) string { return strings.ReplaceAll(s, "\n", "\n"+pad) }

func escapeHTML(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// Format names the JSON export format.
const Format = "exocortex.session.v1"

// Export is the JSON export of a session.
type Export struct {
	Format   string            `json:"format"`
	Name     string            `json:"name"`
	ID       string            `json:"id,omitempty"`
	Exported time.Time         `json:"exported"`
	Messages []json.RawMessage `json:"messages"`
}

// WriteJSON writes the session as an Export: every message, as protojson.
func WriteJSON(w io.Writer, name, id string, msgs []*exocortexv1.Message, now time.Time) error {
	ex := Export{Format: Format, Name: name, ID: id, Exported: now.UTC(), Messages: make([]json.RawMessage, 0, len(msgs))}
	for _, m := range msgs {
		b, err := protojson.Marshal(m)
		if err != nil {
			return fmt.Errorf("encoding message %s: %w", m.GetId(), err)
		}
		ex.Messages = append(ex.Messages, b)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(ex)
}

// ReadJSON reads an Export (or a bare JSON array of messages). source names
// the input in errors. A message that cannot be read is an error naming its
// position; nothing is returned then, so an import is all or nothing.
func ReadJSON(r io.Reader, source string) (Export, []*exocortexv1.Message, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return Export{}, nil, fmt.Errorf("reading %s: %w", source, err)
	}
	var ex Export
	trimmed := strings.TrimSpace(string(b))
	switch {
	case strings.HasPrefix(trimmed, "["):
		if err := json.Unmarshal(b, &ex.Messages); err != nil {
			return Export{}, nil, fmt.Errorf("%s: not a JSON array of messages: %w", source, err)
		}
	case strings.HasPrefix(trimmed, "{"):
		if err := json.Unmarshal(b, &ex); err != nil {
			return Export{}, nil, fmt.Errorf("%s: not a session export: %w", source, err)
		}
		if ex.Format != "" && ex.Format != Format {
			return Export{}, nil, fmt.Errorf("%s: format %q is not %q; export it again with /export json", source, ex.Format, Format)
		}
	default:
		return Export{}, nil, fmt.Errorf("%s: not JSON; /import reads files written by /export json", source)
	}
	if len(ex.Messages) == 0 {
		return Export{}, nil, fmt.Errorf("%s holds no messages", source)
	}
	msgs := make([]*exocortexv1.Message, 0, len(ex.Messages))
	for i, raw := range ex.Messages {
		m := &exocortexv1.Message{}
		if err := protojson.Unmarshal(raw, m); err != nil {
			return Export{}, nil, fmt.Errorf("%s: message %d: %w", source, i+1, err)
		}
		if m.GetRole() == "" {
			return Export{}, nil, fmt.Errorf("%s: message %d has no role", source, i+1)
		}
		if m.GetId() == "" {
			m.Id = uuid.NewString()
		}
		msgs = append(msgs, m)
	}
	return ex, msgs, nil
}
