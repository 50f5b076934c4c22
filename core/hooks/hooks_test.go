package hooks

import (
	"strings"
	"testing"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

func TestAllInFiringOrder(t *testing.T) {
	want := []string{
		"agent_init", "hist_add_before", "monologue_start", "message_loop_start",
		"history_compress_before", "util_model_call_before", "util_model_call_after",
		"message_loop_prompts_before", "system_prompt", "message_loop_prompts_after",
		"embedding_model_changed",
		"before_main_llm_call", "chat_model_call_before",
		"reasoning_stream_chunk", "reasoning_stream", "response_stream_chunk", "response_stream",
		"chat_model_call_after", "reasoning_stream_end", "response_stream_end",
		"error_format", "tool_execute_before", "tool_approval_request", "operator_notification",
		"text_editor_write_before", "text_editor_patch_before", "tool_output_update",
		"text_editor_read_after", "text_editor_write_after", "text_editor_patch_after",
		"tool_execute_after", "hist_add_tool_result",
		"message_loop_exception", "message_loop_end", "monologue_end", "process_chain_end",
	}
	all := All()
	if len(all) != len(want) {
		t.Fatalf("got %d hooks, want %d", len(all), len(want))
	}
	for i, in := range all {
		if in.Name != want[i] {
			t.Errorf("hook %d = %q, want %q", i, in.Name, want[i])
		}
	}
}

func TestOnlyPromptAssemblyHooksInject(t *testing.T) {
	injecting := map[string]bool{
		"message_loop_prompts_before": true,
		"system_prompt":               true,
		"message_loop_prompts_after":  true,
	}
	for _, in := range All() {
		if in.InjectsPrompt != injecting[in.Name] {
			t.Errorf("%s: InjectsPrompt = %v, want %v", in.Name, in.InjectsPrompt, injecting[in.Name])
		}
	}
}

func TestLookup(t *testing.T) {
	tests := []struct {
		name   string
		method string
		stage  Stage
		ok     bool
	}{
		{"before_main_llm_call", "BeforeMainLLMCall", PerIteration, true},
		{"hist_add_before", "HistAddBefore", PerMessage, true},
		{"monologue_end", "MonologueEnd", PerMonologue, true},
		{"agent_init", "AgentInit", PerSession, true},
		{"chat_model_call_after", "ChatModelCallAfter", PerIteration, true},
		{"util_model_call_before", "UtilModelCallBefore", PerIteration, true},
		{"reasoning_stream_chunk", "ReasoningStreamChunk", PerIteration, true},
		{"message_loop_exception", "MessageLoopException", PerIteration, true},
		{"process_chain_end", "ProcessChainEnd", PerMonologue, true},
		{"hist_add_tool_result", "HistAddToolResult", PerIteration, true},
		{"text_editor_write_before", "TextEditorWriteBefore", PerIteration, true},
		{"embedding_model_changed", "EmbeddingModelChanged", PerSession, true},
		{"no_such_hook", "", 0, false},
	}
	for _, tt := range tests {
		in, ok := Lookup(tt.name)
		if ok != tt.ok || in.Method != tt.method || (ok && in.Stage != tt.stage) {
			t.Errorf("Lookup(%q) = %+v, %v", tt.name, in, ok)
		}
	}
	if Name(exocortexv1.Hook_HOOK_SYSTEM_PROMPT) != "system_prompt" {
		t.Errorf("Name(system prompt) = %q", Name(exocortexv1.Hook_HOOK_SYSTEM_PROMPT))
	}
}

// TestFeedsNext pins which hooks thread a response into the next request: the
// loop calls extensions of the others at once when their wiring allows.
func TestFeedsNext(t *testing.T) {
	want := map[string][]string{
		"hist_add_before":            {"content"},
		"system_prompt":              {"prompt_blocks"},
		"message_loop_prompts_after": {"prompt_blocks"},
		"tool_execute_before":        {"args_json"},
		"tool_execute_after":         {"annotations", "content"},
		"util_model_call_before":     {"system", "message"},
		"util_model_call_after":      {"response"},
		"chat_model_call_after":      {"response"},

		"hist_add_tool_result":     {"text"},
		"tool_output_update":       {"display"},
		"text_editor_read_after":   {"content"},
		"text_editor_write_before": {"content"},
		"text_editor_patch_before": {"old_text", "new_text"},
	}
	for _, in := range All() {
		var got []string
		for _, fd := range in.FeedsNext {
			got = append(got, string(fd.Name()))
		}
		if strings.Join(got, ",") != strings.Join(want[in.Name], ",") {
			t.Errorf("%s feeds the next request through %v, want %v", in.Name, got, want[in.Name])
		}
	}
}

// TestDeclaredFields pins which hooks' requests carry what reads_history and
// reads_prompt ask for.
func TestDeclaredFields(t *testing.T) {
	var history, prompt []string
	for _, in := range All() {
		if in.CarriesHistory {
			history = append(history, in.Name)
		}
		if in.ThreadsPrompt {
			prompt = append(prompt, in.Name)
		}
	}
	if got, want := strings.Join(history, ","), "message_loop_prompts_before,message_loop_prompts_after,before_main_llm_call,chat_model_call_before,monologue_end"; got != want {
		t.Errorf("history at %s, want %s", got, want)
	}
	if got, want := strings.Join(prompt, ","), "system_prompt,message_loop_prompts_after"; got != want {
		t.Errorf("prompt so far at %s, want %s", got, want)
	}
}

// TestForTools pins the hooks that fire for one tool call, where for_tools
// limits an extension to the tools named.
func TestForTools(t *testing.T) {
	var got []string
	for _, in := range All() {
		if in.ForTools {
			got = append(got, in.Name)
		}
	}
	if g, want := strings.Join(got, ","), "tool_execute_before,tool_approval_request,tool_output_update,tool_execute_after,hist_add_tool_result"; g != want {
		t.Errorf("for_tools hooks %s, want %s", g, want)
	}
}

// Every hook of the protocol has its place in the loop's order: a hook added
// to proto/ fails here, naming where it goes, until the loop fires it and
// Iteration (or firingOrder) says where.
func TestEveryProtocolHookIsPlaced(t *testing.T) {
	placed := map[exocortexv1.Hook]bool{}
	for _, h := range firingOrder() {
		placed[h] = true
	}
	enum := exocortexv1.Hook(0).Descriptor().Values()
	for i := 0; i < enum.Len(); i++ {
		h := exocortexv1.Hook(enum.Get(i).Number())
		if h != exocortexv1.Hook_HOOK_UNSPECIFIED && !placed[h] {
			t.Errorf("%s is in the protocol but has no place in the loop's order: fire it in core/loop and list it where it fires "+
				"in Iteration (or, outside an iteration, firingOrder) in core/hooks/hooks.go (docs/hooks.md)", enum.Get(i).Name())
		}
	}
}

// TestGating pins the hooks whose response can stop the action they precede:
// the hooks where an extension's failure fails closed.
func TestGating(t *testing.T) {
	if g, want := strings.Join(Gating(), ","), "tool_execute_before,tool_approval_request,text_editor_write_before,text_editor_patch_before"; g != want {
		t.Errorf("gating hooks %s, want %s", g, want)
	}
}
