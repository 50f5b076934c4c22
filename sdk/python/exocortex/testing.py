"""Test extensions through the real protocol, as Go's package sdktest does.

served(plugin) serves a Plugin in the test process behind a real gRPC connection
(on a Unix socket) and yields the generated client, so a test calls the extension
exactly as the host does:

    import unittest
    from exocortex import testing as xt
    from exocortex.v1 import context_pb2, hooks_pb2, state_pb2

    class CountsFailures(unittest.TestCase):
        def test_counts(self):
            with xt.served(plugin()) as client:
                resp = client.ToolExecuteAfter(hooks_pb2.ToolExecuteAfterRequest(
                    call=xt.hook_call("failure_counter", xt.state(TRACKER, state_pb2.FailureTracker())),
                    tool_call=context_pb2.ToolCall(name="shell"),
                    result=context_pb2.ToolResult(error="exit status 1")))
                ft = xt.written(resp.changes, TRACKER)
                ...

A refused call raises grpc.RpcError; its code() and details() are what the host gets.
"""

from __future__ import annotations

import contextlib
import datetime
import os
import secrets
import tempfile
from concurrent import futures
from typing import Iterator, Optional

import grpc
from google.protobuf import any_pb2
from google.protobuf.message import Message

from exocortex.keys import Key
from exocortex.server import new_server
from exocortex.spec import Plugin
from exocortex.v1 import context_pb2, plugin_pb2_grpc


@contextlib.contextmanager
def served(plugin: Plugin, max_workers: int = 8) -> Iterator[plugin_pb2_grpc.PluginStub]:
    """Validate plugin (InvalidPlugin when it is not valid), serve it on a Unix
    socket in this process and yield the client the host would use; everything is
    closed when the block ends."""
    service = new_server(plugin)
    with tempfile.TemporaryDirectory(prefix="exocortex-test-") as d:
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=max_workers))
        plugin_pb2_grpc.add_PluginServicer_to_server(service, server)
        address = "unix:" + os.path.join(d, "plugin.sock")
        server.add_insecure_port(address)
        server.start()
        channel = grpc.insecure_channel(address)
        try:
            yield plugin_pb2_grpc.PluginStub(channel)
        finally:
            channel.close()
            server.stop(None).wait()
            service.loop.close()


def hook_call(extension: str, *state: context_pb2.StateEntry) -> context_pb2.HookCall:
    """The HookCall of a request to the named extension, with a context whose ids are
    filled in (a fresh context_id, a fixed session and request) and the given state
    entries."""
    return context_pb2.HookCall(
        extension=extension,
        context=context_pb2.Context(
            context_id=secrets.token_hex(8),
            session_id="sdktest-session",
            request_id="sdktest-request",
            message_id="sdktest-message",
            timestamp_utc=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            source_entity=context_pb2.SourceEntity(id="operator", type="user"),
        ),
        state=list(state),
    )


def state(key: Key, value: Message) -> context_pb2.StateEntry:
    """One state entry for hook_call: the key's value as the host would send it."""
    a = any_pb2.Any()
    a.Pack(value)
    return context_pb2.StateEntry(key=key.name, value=a)


def written(changes: context_pb2.StateChanges, key: Key) -> Optional[Message]:
    """The value a response's changes write to the key (the last write if there are
    several), or None. ValueError when the value is not of the key's type."""
    out = None
    for w in changes.writes:
        if w.key != key.name:
            continue
        msg = key.message_type()
        if not w.value.Unpack(msg):
            raise ValueError(f'state key "{key.name}": written value of type "{w.value.type_url}" is not a {key!r}')
        out = msg
    return out


def was_reset(changes: context_pb2.StateChanges, key: Key) -> bool:
    """Whether a response's changes reset the key."""
    return key.name in changes.resets
