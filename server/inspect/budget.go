package inspect

import (
	"math"

	"github.com/exocortex/exocortex/core/loop"
)

// Split is one request's context budget as a stacked bar: the window
// divided into Fixed + Blocks + Recall + History + Free + Reserve, in the
// budget's own tokens (loop.Budget, the loop's calibrated count):
//
//	fixed    the fixed prompt (main prompt and tool documentation: System)
//	recall   the recall blocks (title RecallTitle), by the budget's tokens
//	         per byte; at most what the blocks took
//	blocks   the other prompt blocks (the budget's Blocks less recall)
//	history  the summary of compressed turns and the verbatim history
//	free     what the request could still have taken (Limit − Tokens)
//	reserve  kept free for the reply
type Split struct {
	Iteration int `json:"iteration"`
	Window    int `json:"window"`
	Limit     int `json:"limit"`
	Tokens    int `json:"tokens"`
	Fixed     int `json:"fixed"`
	Blocks    int `json:"blocks"`
	Recall    int `json:"recall"`
	History   int `json:"history"`
	Free      int `json:"free"`
	Reserve   int `json:"reserve"`
	// Tools is the tool documentation inside Fixed; Summary the summary
	// inside History; Messages the verbatim messages.
	Tools    int `json:"tools"`
	Summary  int `json:"summary"`
	Messages int `json:"messages"`
	// Fill is Tokens over Window.
	Fill       float64 `json:"fill"`
	Calibrated bool    `json:"calibrated"`
	// LeftOut is what was shortened or dropped to fit, and why.
	LeftOut []loop.LeftOut `json:"left_out,omitempty"`
}

// SplitOf splits budget b of iteration n; blocks are the request's blocks,
// whose recall blocks are counted apart.
func SplitOf(n int, b loop.Budget, blocks []loop.RequestBlock) Split {
	recall := 0
	for _, blk := range blocks {
		if blk.Title == RecallTitle {
			// As the loop counts a block: its title and content, and 2.
			recall += int(math.Ceil(float64(len(blk.Title))*b.TokensPerByte)) + int(math.Ceil(float64(len(blk.Content))*b.TokensPerByte)) + 2
		}
	}
	recall = min(recall, max(b.Blocks, 0))
	return Split{
		Iteration: n, Window: b.Window, Limit: b.Limit, Tokens: b.Tokens,
		Fixed: b.System, Blocks: b.Blocks - recall, Recall: recall, History: b.Summary + b.History,
		Free: max(b.Limit-b.Tokens, 0), Reserve: b.Reserve,
		Tools: b.Tools, Summary: b.Summary, Messages: b.Messages, Fill: b.Fill(), Calibrated: b.Calibrated, LeftOut: b.LeftOut,
	}
}
