"""Exocortex's Python SDK: write extensions for the Exocortex agent host in Python.

An extension is a class with a spec() and one method per hook it handles, named
after the hook; state is read and written through typed keys; serve() turns a set of
extensions and tools into a plugin process the host starts (over hashicorp/go-plugin,
as a Go plugin built with the Go SDK). It behaves as the Go SDK (package sdk) does:
the same manifest, the same refusals, the same gRPC status codes.

    import exocortex as exo
    from exocortex.v1 import state_pb2

    TRACKER = exo.Key(state_pb2.FailureTracker)    # built-in key "failure_tracker"

    class FailureCounter:
        def spec(self):
            return exo.Spec(name="failure_counter", order=20,
                            reads=[TRACKER], writes=[TRACKER])

        def tool_execute_after(self, call, req):
            ft = TRACKER.get(call) or state_pb2.FailureTracker()
            ...
            TRACKER.set(call, ft)
            return None                              # no change to the tool result

    if __name__ == "__main__":
        exo.serve(exo.Plugin(name="failures", version="1.0.0", extensions=[FailureCounter()]))

See sdk/python/README.md for the whole API.
"""

from exocortex import signals
from exocortex.call import Call, StateError
from exocortex.hooks import HOOKS, HookInfo, hook_name, is_prompt_hook
from exocortex.keys import Key, builtin_keys
from exocortex.log import HostLogHandler, Logger
from exocortex.serve import MAGIC_COOKIE_KEY, MAGIC_COOKIE_VALUE, serve
from exocortex.server import PROTOCOL_VERSION, PluginService, Refusal, new_server
from exocortex.spec import HookError, InvalidPlugin, Plugin, Spec, StatusError, Tool, ToolError
from exocortex.v1.manifest_pb2 import (
    ACCESS_READ,
    ACCESS_READ_WRITE,
    ACCESS_WRITE,
    SCOPE_ITERATION,
    SCOPE_MONOLOGUE,
    SCOPE_PERSISTENT,
    SCOPE_SESSION,
    FileSpec,
)

__all__ = [
    "ACCESS_READ", "ACCESS_READ_WRITE", "ACCESS_WRITE", "Call", "FileSpec", "HOOKS", "HookError", "HookInfo",
    "HostLogHandler", "InvalidPlugin", "Key", "Logger", "MAGIC_COOKIE_KEY", "MAGIC_COOKIE_VALUE",
    "PROTOCOL_VERSION", "Plugin", "PluginService", "Refusal", "SCOPE_ITERATION", "SCOPE_MONOLOGUE",
    "SCOPE_PERSISTENT", "SCOPE_SESSION", "Spec", "StateError", "StatusError", "Tool", "ToolError",
    "builtin_keys", "hook_name", "is_prompt_hook", "new_server", "serve", "signals",
]
