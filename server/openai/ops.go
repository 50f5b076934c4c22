package openai

import "github.com/exocortex/exocortex/server/openapi"

// Model is one entry of GET /v1/models.
type Model struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

// ModelList is GET /v1/models's reply.
type ModelList struct {
	Object string  `json:"object"`
	Data   []Model `json:"data"`
}

// ChoiceMessage is the answer of a whole completion.
type ChoiceMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Choice is a whole completion's one choice.
type Choice struct {
	Index        int           `json:"index"`
	Message      ChoiceMessage `json:"message"`
	FinishReason string        `json:"finish_reason"`
}

// Usage is always zero: the agent's model calls are not counted here.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// Completion is a non-streamed reply (object "chat.completion").
type Completion struct {
	ID      string   `json:"id"`
	Object  string   `json:"object"`
	Created int64    `json:"created"`
	Model   string   `json:"model"`
	Choices []Choice `json:"choices"`
	Usage   Usage    `json:"usage"`
}

// Delta is what one chunk adds: the agent's progress as reasoning_content,
// the answer as content.
type Delta struct {
	Role             string  `json:"role,omitempty"`
	Content          *string `json:"content,omitempty"`
	ReasoningContent string  `json:"reasoning_content,omitempty"`
}

// ChunkChoice is a chunk's one choice; FinishReason is null until the last.
type ChunkChoice struct {
	Index        int     `json:"index"`
	Delta        Delta   `json:"delta"`
	FinishReason *string `json:"finish_reason"`
}

// Chunk is one event of a streamed reply (object "chat.completion.chunk").
type Chunk struct {
	ID      string        `json:"id"`
	Object  string        `json:"object"`
	Created int64         `json:"created"`
	Model   string        `json:"model"`
	Choices []ChunkChoice `json:"choices"`
}

// Ops describes the endpoint's routes for the OpenAPI document.
func Ops() []openapi.Op {
	return []openapi.Op{
		{Method: "GET", Pattern: "/v1/models", Reply: ModelList{}, Description: "One model, " + ModelID + ": the agent."},
		{Method: "POST", Pattern: "/v1/chat/completions", Body: request{}, Reply: Completion{},
			Description: "A monologue on the last user message, in the session named by the " + SessionHeader +
				" header or the user field (a new one otherwise; its name comes back in " + SessionHeader + "). " +
				"With stream: true the reply is text/event-stream: data lines of chat.completion.chunk (the agent's progress as " +
				"reasoning_content, the answer as content), ending with data: [DONE]."},
	}
}
