"""A plugin with slow extensions, for the test of time budgets (the Python twin of
testdata/slowplugin):

    slow_display at response_stream_chunk sleeps SLOW_CHUNK seconds (default 0.08) per call;
    slow_end at message_loop_end sleeps SLOW_END seconds (default 0.15).
"""

import os
import time

import exocortex as exo
from exocortex.v1 import context_pb2, hooks_pb2


def pause(env, default):
    try:
        d = float(os.environ.get(env, ""))
    except ValueError:
        d = default
    time.sleep(d)


class Display:
    def spec(self):
        return exo.Spec(name="slow_display", order=10, description="Shows the reply in capitals, slowly.")

    def response_stream_chunk(self, call, req):
        pause("SLOW_CHUNK", 0.08)
        return hooks_pb2.ResponseStreamChunkResponse(display=(req.text + req.delta).upper())


class End:
    def spec(self):
        return exo.Spec(name="slow_end", order=10, description="Takes its time at the end of each iteration.")

    def message_loop_end(self, call, req):
        pause("SLOW_END", 0.15)


def respond(call, args):
    return context_pb2.ToolResult(content="done", break_loop=True)


if __name__ == "__main__":
    exo.serve(exo.Plugin(name="slow", version="1", extensions=[Display(), End()],
                         tools=[exo.Tool("response", "Ends the monologue with its text.", run=respond)]))
