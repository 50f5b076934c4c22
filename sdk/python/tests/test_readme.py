"""The complete plugin of README.md runs as shown: this test loads the first Python
block of the README and calls its extensions and tool through a real connection."""

import io
import os
import re
import types
import unittest

import grpc

import exocortex as exo
from exocortex import signals
from exocortex import testing as xt
from exocortex.v1 import context_pb2, hooks_pb2, manifest_pb2, plugin_pb2, state_pb2

README = os.path.join(os.path.dirname(__file__), "..", "README.md")


def load_example():
    with open(README, encoding="utf-8") as f:
        text = f.read()
    block = re.search(r"```python\n(.*?)```", text, re.S)
    if block is None:
        raise AssertionError("README.md has no python block")
    mod = types.ModuleType("readme_example")
    exec(compile(block.group(1), "README.md", "exec"), mod.__dict__)  # __name__ is not "__main__"
    return mod


class ReadmeExampleTest(unittest.TestCase):
    def test_example_plugin(self):
        ex = load_example()
        tracker = ex.TRACKER
        p = ex.plugin()
        p.logger = exo.Logger(p.name, io.StringIO())  # keep the test's output clean
        with xt.served(p) as client:
            m = client.Manifest(manifest_pb2.ManifestRequest())
            self.assertEqual([(e.name, e.order) for e in m.extensions],
                             [("failure_counter", 20), ("failure_notice", 60), ("repeat_breaker", 80)])
            self.assertEqual([t.name for t in m.tools], ["shout"])

            ft = None
            for _ in range(2):
                state = [xt.state(tracker, ft)] if ft is not None else []
                resp = client.ToolExecuteAfter(hooks_pb2.ToolExecuteAfterRequest(
                    call=xt.hook_call("failure_counter", *state), tool_call=context_pb2.ToolCall(name="shell"),
                    result=context_pb2.ToolResult(error="exit status 1")))
                ft = xt.written(resp.changes, tracker)
            self.assertEqual(ft.failures["shell"], 2)

            resp = client.MessageLoopPromptsAfter(hooks_pb2.MessageLoopPromptsAfterRequest(
                call=xt.hook_call("failure_notice", xt.state(tracker, ft))))
            self.assertEqual([b.content for b in resp.prompt_blocks], ["These tools keep failing: shell"])
            resp = client.MessageLoopPromptsAfter(hooks_pb2.MessageLoopPromptsAfterRequest(
                call=xt.hook_call("failure_notice")))
            self.assertEqual(len(resp.prompt_blocks), 0)

            repeat = context_pb2.Message(signal=signals.REPEAT)
            resp = client.MessageLoopEnd(hooks_pb2.MessageLoopEndRequest(
                call=xt.hook_call("repeat_breaker"), added=[repeat, repeat]))
            self.assertEqual(resp.stop, "the model keeps repeating itself")

            def tool(args):
                return client.ExecuteTool(plugin_pb2.ExecuteToolRequest(
                    call=xt.hook_call(""), tool_call=context_pb2.ToolCall(name="shout", args_json=args))).result

            self.assertEqual(tool('{"text":"hi"}').content, "HI!")
            self.assertEqual(tool("{}").error, '"text" must be a string')
            with self.assertRaises(grpc.RpcError):
                tool("{")
        self.assertIsInstance(state_pb2.FailureTracker(), type(ft))


if __name__ == "__main__":
    unittest.main()
