package htn

import (
	"testing"

	"github.com/exocortex/exocortex/extensions/belief"
	"github.com/exocortex/exocortex/extensions/internal/hooktest"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// TestPlansOnlyForTheirTasks: messages a user would type that are not the
// task of a plan get no PLAN block, although the belief tracker's cue count
// gives each a domain with a plan (one incidental cue word: "test",
// "python", "package", "build", "function"); the tasks the plans are for
// still get theirs.
func TestPlansOnlyForTheirTasks(t *testing.T) {
	client := sdktest.Serve(t, sdk.Plugin{Name: "cognition", Extensions: []sdk.Extension{Selector{}}})
	tests := []struct {
		name, text string
		plan       string // "" for none
	}{
		{"a cricket match", "Please summarise the key points of the test match between England and India yesterday", ""},
		{"a pet snake", "What is a good python species to keep as a pet for a beginner at home?", ""},
		{"a parcel", "I need to package my grandmother's birthday present and ship it by Friday", ""},
		{"a treehouse", "I'm building a treehouse this weekend, how should I test the wood is strong?", ""},
		{"the liver", "Tell me about the function of the liver in the human body please", ""},
		{"a driving test", "I failed my driving test again, how do I fix my nerves before the next one?", ""},
		{"a question of why", "why do cats purr so loudly when they sit on my lap", ""},
		{"opening hours", "I need to check the opening hours of the museum before we go there", ""},
		{"a tool in prose", "Can you make a test batch of cookies with less sugar for my go club?", ""},
		{"a TV programme", "Which program on BBC tonight would be good for a family with small kids?", ""},
		{"code to change", "Please refactor the parse function in parser.go so it returns an error", "change code"},
		{"a failing build", "the build fails since yesterday with a compile error, please fix it", "fix a failure"},
		{"a test to write", "Write a unit test for the retry loop in client.py and run it", "change code"},
		{"a server to change", "Restart the nginx service on the staging server after changing its config", "change a system"},
		{"data to analyse", "Compare the average latency in results.csv between the two runs", "analyse data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bs := belief.Classify(tt.text)
			if _, has := Plans()[bs.GetPrimaryDomain()]; !has && tt.plan == "" {
				t.Fatalf("the tracker classifies %q as %q, which has no plan: the case tests nothing", tt.text, bs.GetPrimaryDomain())
			}
			resp, err := client.MessageLoopPromptsBefore(t.Context(), &exocortexv1.MessageLoopPromptsBeforeRequest{
				Call: hooktest.Call("htn_plan_selector", 1, hooktest.Msgs("user", tt.text), sdktest.State(bstKey(), bs)),
			})
			if err != nil {
				t.Fatal(err)
			}
			p, _ := sdktest.Written(t, resp.GetChanges(), key())
			if got := p.GetPlan(); got != tt.plan {
				t.Errorf("%q (domain %s): plan %q, want %q; blocks %v", tt.text, bs.GetPrimaryDomain(), got, tt.plan, resp.GetPromptBlocks())
			}
			if tt.plan == "" && len(resp.GetPromptBlocks()) != 0 {
				t.Errorf("%q: a PLAN block for a task with no plan: %v", tt.text, resp.GetPromptBlocks())
			}
		})
	}
}
