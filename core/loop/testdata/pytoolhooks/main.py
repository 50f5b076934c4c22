#!/usr/bin/python3
"""A test plugin written with the Python SDK: a tool "stream" that reports its
output in pieces (Call.report_output) and an embedding model change
(Call.report_embedding_model_changed) through the host's services, a tool
"response", and an extension that appends every call of tool_output_update,
embedding_model_changed and tool_execute_after as a JSON line to
$PYTOOLHOOKS_LOG, showing the operator "secret" as "******"."""

import json
import os
import threading

import exocortex as exo
from exocortex.v1 import context_pb2, hooks_pb2

LOCK = threading.Lock()


def log(**fields):
    with LOCK, open(os.environ["PYTOOLHOOKS_LOG"], "a", encoding="utf-8") as f:
        f.write(json.dumps(fields) + "\n")


class Watch:
    def spec(self):
        return exo.Spec(name="py_tool_watch", order=50, description="Records the tool-side hooks and masks secrets.")

    def tool_output_update(self, call, req):
        log(hook="tool_output_update", tool=req.tool_call.name, delta=req.delta, output=req.output)
        return hooks_pb2.ToolOutputUpdateResponse(display=req.output.replace("secret", "******"))

    def embedding_model_changed(self, call, req):
        log(hook="embedding_model_changed", old=req.old_model, old_dims=req.old_dims,
            new=req.new_model, new_dims=req.new_dims, store=req.store)
        return None

    def tool_execute_after(self, call, req):
        log(hook="tool_execute_after", tool=req.tool_call.name)
        return None


def stream(call, args):
    shown = [call.report_output(piece) for piece in ("one ", "secret ", "three")]
    call.report_embedding_model_changed("/tmp/store", "glove-100d", 100, "nomic-embed-text", 768)
    return context_pb2.ToolResult(content="streamed; shown: " + " | ".join(shown))


def response(call, args):
    return context_pb2.ToolResult(content=str(args.get("text", "")), break_loop=True)


if __name__ == "__main__":
    exo.serve(exo.Plugin(name="pytoolhooks", version="test", extensions=[Watch()],
                         tools=[exo.Tool("stream", "Reports its output in pieces (test).", run=stream),
                                exo.Tool("response", "Ends the monologue with text (test).", run=response)]))
