#!/usr/bin/python3
"""A plugin whose batches break the stop rule, for the checker's own test
(TestPluginCheckerFindsABadBatch): it patches the Python SDK so that a batch goes on
after a result that sets more than state."""

import exocortex as exo
import exocortex.server
from exocortex.v1 import hooks_pb2

exocortex.server._state_only = lambda resp: True  # the bug under test


class Speaker:
    def spec(self):
        return exo.Spec(name="speaker", order=1)

    def message_loop_end(self, call, req):
        return hooks_pb2.MessageLoopEndResponse(intervention="said something")


class Listener:
    def spec(self):
        return exo.Spec(name="listener", order=2)

    def message_loop_end(self, call, req):
        return None


if __name__ == "__main__":
    exo.serve(exo.Plugin(name="badbatch", version="1.0.0", extensions=[Speaker(), Listener()]))
