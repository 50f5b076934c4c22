package llm

import (
	"context"
	"fmt"

	"github.com/ollama/ollama/api"
)

// ContextLength returns the context the model was trained for, as the server's
// /api/show reports it (0 when the server does not say). The agent loop sizes
// its prompt budget by it when no num_ctx is configured; another provider
// offers the same method (see loop.Window).
func (c *Client) ContextLength(ctx context.Context, model string) (int, error) {
	show, err := c.api.Show(ctx, &api.ShowRequest{Model: model})
	if err != nil {
		return 0, fmt.Errorf("context length of %s: %w", model, c.explain(err, model))
	}
	return contextLength(show.ModelInfo), nil
}
