package a0port

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/core/discover"
	"github.com/exocortex/exocortex/core/host"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk/python"
)

// nativePy is a native Python SDK extension doing what a0File does: read and
// write a counter in typed state and add a prompt block at
// message_loop_prompts_after, with the same declarations as the layer's.
const nativePy = `import exocortex as exo
from google.protobuf import struct_pb2
from exocortex.v1 import context_pb2, hooks_pb2

COUNT = exo.Key(struct_pb2.Value, name="native_count", scope=exo.SCOPE_SESSION, doc="calls")


class Note:
    def spec(self):
        return exo.Spec(name="note", order=50, reads=[COUNT], writes=[COUNT], injects_prompt=True,
                        reads_history=True, reads_prompt=True)

    def message_loop_prompts_after(self, call, req):
        v = COUNT.get(call)
        n = (int(v.number_value) if v is not None else 0) + 1
        COUNT.set(call, struct_pb2.Value(number_value=n))
        return hooks_pb2.MessageLoopPromptsAfterResponse(prompt_blocks=[
            context_pb2.PromptBlock(title="note", content=f"note call {n}, iteration {req.iteration}")])


if __name__ == "__main__":
    exo.serve(exo.Plugin(name="native", version="1", extensions=[Note()]))
`

// a0File is the same extension written the Agent Zero way.
const a0File = `from helpers.extension import Extension
from agent import LoopData


class Note(Extension):
    async def execute(self, loop_data=LoopData(), **kwargs):
        n = (self.agent.get_data("count") or 0) + 1
        self.agent.set_data("count", n)
        loop_data.extras_temporary["note"] = f"note call {n}, iteration {loop_data.iteration}"
`

// nativeAsyncPy is nativePy with an async hook method that awaits once: its
// coroutine runs on the plugin's event loop (exocortex.aio).
var nativeAsyncPy = strings.Replace(strings.Replace(nativePy, "    def message_loop_prompts_after(self, call, req):\n",
	"    async def message_loop_prompts_after(self, call, req):\n        await asyncio.sleep(0)\n", 1),
	"import exocortex as exo\n", "import asyncio\nimport exocortex as exo\n", 1)

// a0AwaitFile is a0File awaiting once: served on the plugin's event loop, not
// driven on the calling thread.
var a0AwaitFile = strings.Replace(strings.Replace(a0File, "        n = (", "        await asyncio.sleep(0)\n        n = (", 1),
	"from helpers.extension", "import asyncio\nfrom helpers.extension", 1)

// BenchmarkCallCost calls one extension at message_loop_prompts_after through
// the real host (a real Python plugin process, gRPC, the SDK's decoding and
// encoding), with a 10-message history in the request: "native" is written with
// the Python SDK, "ported" is the same extension written the Agent Zero way and
// served by the compatibility layer. The target is ported <= 2x native.
// "native-async" and "ported-await" are the same with one await, so their
// coroutines run on the plugin's long-lived event loop (exocortex.aio) instead
// of finishing on the calling thread.
func BenchmarkCallCost(b *testing.B) {
	var history []*exocortexv1.Message
	for i := range 10 {
		role := []string{"user", "assistant"}[i%2]
		history = append(history, &exocortexv1.Message{Role: role, Content: fmt.Sprintf("message %d of the conversation so far, with some words in it", i)})
	}
	for _, kind := range []string{"native", "ported", "native-async", "ported-await"} {
		b.Run(kind, func(b *testing.B) {
			dir := b.TempDir()
			plug := filepath.Join(dir, kind)
			switch kind {
			case "native", "native-async":
				code := nativePy
				if kind == "native-async" {
					code = nativeAsyncPy
				}
				pj, _ := json.Marshal(discover.Manifest{Command: []string{python.Interpreter, "main.py"}})
				if err := os.MkdirAll(plug, 0o755); err != nil {
					b.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(plug, "main.py"), []byte(code), 0o644); err != nil {
					b.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(plug, "plugin.json"), pj, 0o644); err != nil {
					b.Fatal(err)
				}
				if err := python.Install(plug); err != nil {
					b.Fatal(err)
				}
			case "ported", "ported-await":
				code := a0File
				if kind == "ported-await" {
					code = a0AwaitFile
				}
				src := filepath.Join(b.TempDir(), "usr", "extensions", "python", "message_loop_prompts_after")
				if err := os.MkdirAll(src, 0o755); err != nil {
					b.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(src, "_50_note.py"), []byte(code), 0o644); err != nil {
					b.Fatal(err)
				}
				if _, err := Port(b.Context(), filepath.Dir(filepath.Dir(filepath.Dir(src))), plug, kind); err != nil {
					b.Fatal(err)
				}
			}
			ctx := context.Background()
			h, err := host.New(ctx, host.Options{Dirs: []discover.Dir{{Path: dir, Source: discover.User}}})
			if err != nil {
				b.Fatal(err)
			}
			defer h.Close()
			exts := h.Extensions(exocortexv1.Hook_HOOK_MESSAGE_LOOP_PROMPTS_AFTER)
			if len(exts) != 1 {
				b.Fatalf("%d extensions at message_loop_prompts_after, want 1: %v", len(exts), h.FailedPlugins())
			}
			ext := exts[0]
			req := &exocortexv1.MessageLoopPromptsAfterRequest{Iteration: 1, History: history, NumCtx: 8192, PromptTokens: 500,
				Call: &exocortexv1.HookCall{Extension: ext.Name(), Context: &exocortexv1.Context{SessionId: "bench", Hook: "message_loop_prompts_after", Iteration: 1}}}
			b.ResetTimer()
			for b.Loop() {
				resp, err := host.Call(ctx, ext, req, exocortexv1.PluginClient.MessageLoopPromptsAfter)
				if err != nil {
					b.Fatal(err)
				}
				if len(resp.GetPromptBlocks()) != 1 {
					b.Fatalf("answered %v, want one prompt block", resp)
				}
			}
		})
	}
}
