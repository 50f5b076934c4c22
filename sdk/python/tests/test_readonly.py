"""The read-only request check of the Python SDK (exocortex/_readonly.py), the twin
of sdk/readonly_internal_test.go: the first changed field is named by its path, and
the advice comes from the protocol's changed_by and change_elsewhere options."""

import unittest

from exocortex._readonly import advice, request_change
from exocortex.v1 import context_pb2, hooks_pb2, manifest_pb2


def history(n):
    return [context_pb2.Message(id=f"m{i}", role="user", content=f"message {i}") for i in range(n)]


def call():
    return context_pb2.HookCall(extension="x", context=context_pb2.Context(session_id="s"))


class RequestChangeTest(unittest.TestCase):
    def test_paths_and_advice(self):
        def nested(r):
            r.result.content += "!"

        def element(r):
            r.history[2].content = "x"

        def length(r):
            del r.prompt[0]

        def scalar(r):
            r.delta = "A"

        def state(r):
            r.call.state.add(key="k")

        def tools(r):
            del r.tools[:]

        def utility(r):
            r.message = "n"

        def element_prompt(r):
            r.prompt[0].content = "x"

        def error(r):
            r.error = ""

        cases = [
            ("unchanged", "tool_execute_after",
             hooks_pb2.ToolExecuteAfterRequest(call=call(), result=context_pb2.ToolResult(content="a")),
             lambda r: None, "", ""),
            ("nested", "tool_execute_after",
             hooks_pb2.ToolExecuteAfterRequest(call=call(), result=context_pb2.ToolResult(content="a")), nested,
             "result.content",
             "Return the change in ToolExecuteAfterResponse.content or ToolExecuteAfterResponse.annotations instead."),
            ("list element", "message_loop_prompts_after",
             hooks_pb2.MessageLoopPromptsAfterRequest(call=call(), history=history(3)), element,
             "history[2].content", "No field of MessageLoopPromptsAfterResponse changes history: the history cannot"),
            ("list length", "before_main_llm_call",
             hooks_pb2.BeforeMainLLMCallRequest(call=call(), prompt=history(3)), length,
             "prompt", "the prompt is final at before_main_llm_call"),
            ("scalar", "response_stream_chunk", hooks_pb2.ResponseStreamChunkRequest(call=call(), delta="a"), scalar,
             "delta", "Return the change in ResponseStreamChunkResponse.display instead."),
            ("state", "message_loop_end", hooks_pb2.MessageLoopEndRequest(call=call()), state,
             "call.state", "State changes go through the Call"),
            ("utility call", "util_model_call_before",
             hooks_pb2.UtilModelCallBeforeRequest(call=call(), message="m"), utility,
             "message", "Return the change in UtilModelCallBeforeResponse.message instead."),
            ("chat call prompt", "chat_model_call_before",
             hooks_pb2.ChatModelCallBeforeRequest(call=call(), prompt=history(2)), element_prompt,
             "prompt[0].content", "the prompt is final at chat_model_call_before"),
            ("reasoning", "reasoning_stream_chunk", hooks_pb2.ReasoningStreamChunkRequest(call=call(), delta="a"), scalar,
             "delta", "Return the change in ReasoningStreamChunkResponse.display instead."),
            ("exception", "message_loop_exception",
             hooks_pb2.MessageLoopExceptionRequest(call=call(), error="e"), error,
             "error", "Return the change in MessageLoopExceptionResponse.handled instead."),
            ("no response field", "system_prompt",
             hooks_pb2.SystemPromptRequest(call=call(), tools=[manifest_pb2.ToolSpec(name="a")]), tools,
             "tools", "not something system_prompt can change"),
        ]
        for name, hook, req, change, path, want in cases:
            with self.subTest(name):
                before = type(req)()
                before.CopyFrom(req)
                change(req)
                got, top = request_change(before, req)
                self.assertEqual(got, path)
                if path:
                    self.assertIn(want, advice(hook, top))


if __name__ == "__main__":
    unittest.main()
