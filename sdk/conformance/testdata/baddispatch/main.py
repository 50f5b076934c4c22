#!/usr/bin/python3
"""A plugin whose Dispatch stream is wrong, for the checker's own test
(TestPluginCheckerFindsABadDispatch): it patches the Python SDK so that each batch
over the stream is answered with the answer to the batch before it (the first with
nothing), and the stream ends with an error when the host closes its side."""

import grpc

import exocortex as exo
import exocortex.server
from exocortex.v1 import plugin_pb2


def late_dispatch(self, request_iterator, context):  # the bug under test
    previous = plugin_pb2.BatchResponse()
    for request in request_iterator:
        yield previous
        previous = self._run_batch(request, context)
    context.abort(grpc.StatusCode.INTERNAL, "the stream broke")


exocortex.server.PluginService.Dispatch = late_dispatch


class Ticker:
    def spec(self):
        return exo.Spec(name="ticker", order=1)

    def message_loop_start(self, call, req):
        return None

    def message_loop_end(self, call, req):
        return None


if __name__ == "__main__":
    exo.serve(exo.Plugin(name="baddispatch", version="1.0.0", extensions=[Ticker()]))
