package sleep

import (
	"context"
	"fmt"
	"strings"

	"github.com/exocortex/exocortex/core/llm"
)

// Summarizer writes the summary of a cluster of related memories.
type Summarizer interface {
	// Summarize returns a short summary of texts (most central first).
	Summarize(ctx context.Context, texts []string) (string, error)
	// Name names the summarizer for the report and the summary's metadata.
	Name() string
}

// ModelSummarizer asks a chat model through core/llm (Ollama or OpenAI-compatible) for
// each summary, at temperature 0 with a fixed seed.
type ModelSummarizer struct {
	Client llm.Provider
	Model  string
	// NumCtx is the context window (default llm.DefaultNumCtx).
	NumCtx int
}

// Name is "MODEL".
func (m *ModelSummarizer) Name() string { return m.Model }

// summaryPrompt is the instruction; the memories follow it, one per line.
const summaryPrompt = `Summarise these related memories of an assistant in at most three sentences.
Keep every name, number, path and identifier exactly as written. Do not add anything they do not say.
Reply with the summary only.

Memories:
`

// Summarize asks the model.
func (m *ModelSummarizer) Summarize(ctx context.Context, texts []string) (string, error) {
	var b strings.Builder
	b.WriteString(summaryPrompt)
	for _, t := range texts {
		fmt.Fprintf(&b, "- %s\n", strings.Join(strings.Fields(t), " "))
	}
	reply, err := m.Client.Chat(ctx, llm.ChatRequest{
		Model:    m.Model,
		Messages: []llm.Message{{Role: llm.RoleUser, Content: b.String()}},
		NumCtx:   m.NumCtx,
		Options:  map[string]any{"temperature": 0, "seed": 7, "num_predict": 300},
	}, nil)
	if err != nil {
		return "", err
	}
	if reply.Truncated() {
		return "", fmt.Errorf("the model's summary was cut off at its output limit")
	}
	return strings.TrimSpace(reply.Content), nil
}
