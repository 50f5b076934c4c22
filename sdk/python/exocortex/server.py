"""The Plugin service: dispatches each hook call to the extension it names."""

from __future__ import annotations

import asyncio
import json
import time
import traceback
from typing import Any, Callable, Dict, Iterator, Optional, Tuple

import grpc
from google.protobuf import any_pb2
from google.protobuf.message import Message

from exocortex._manifest import READS_HISTORY_HOOKS, READS_PROMPT_HOOKS, Built, ExtEntry, build
from exocortex._readonly import mutation_error, request_change
from exocortex.aio import CallEnded, PluginLoop
from exocortex.call import Call
from exocortex.hooks import HOOKS, HookInfo, lookup
from exocortex.log import Logger
from exocortex.spec import HookError, Plugin, StatusError, ToolError
from exocortex.v1 import context_pb2, manifest_pb2, plugin_pb2, plugin_pb2_grpc

# The plugin protocol this SDK speaks: package exocortex.v1.
PROTOCOL_VERSION = 1

# The gRPC status codes by number, as Go names them (codes.Code.String()): a batch
# result's error is written as a Go plugin's is, "rpc error: code = Unknown desc = ...",
# which is also how a Go host prints the error of a single call.
_GO_CODE_NAMES = ("OK", "Canceled", "Unknown", "InvalidArgument", "DeadlineExceeded", "NotFound", "AlreadyExists",
                  "PermissionDenied", "ResourceExhausted", "FailedPrecondition", "Aborted", "OutOfRange",
                  "Unimplemented", "Internal", "Unavailable", "DataLoss", "Unauthenticated")

_UINT32_MAX = 2 ** 32 - 1

# The request fields only extensions declaring reads_history receive, at the hooks
# whose requests have them (READS_HISTORY_HOOKS): the history, or
# before_main_llm_call's prompt.
_CONVERSATION_FIELDS = ("history", "prompt")
# The request fields only extensions declaring reads_prompt receive, at the hooks
# whose requests have them (READS_PROMPT_HOOKS): system_prompt's system_prompt,
# message_loop_prompts_after's extras and prompt_tokens (before_main_llm_call's
# prompt_tokens is everyone's).
_PROMPT_FIELDS = ("system_prompt", "extras", "prompt_tokens")

try:  # protobuf >= 4.22; Message.UnknownFields() is deprecated there
    from google.protobuf.unknown_fields import UnknownFieldSet as _unknown_fields
except ImportError:  # Debian's protobuf 4.21
    def _unknown_fields(m: Message):
        return m.UnknownFields()


class Refusal(Exception):
    """A failed call: the gRPC status code and the message the host gets."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _stack_head(exc: BaseException, n: int = 5) -> str:
    """The innermost frames of an exception's traceback, one per line."""
    frames = traceback.extract_tb(exc.__traceback__)[-n:]
    return "\n".join(f"  at {f.name} ({f.filename}:{f.lineno})" for f in reversed(frames))


def _status_text(code: grpc.StatusCode, message: str) -> str:
    """A failed call's status as a Go error prints it."""
    n = code.value[0]
    name = _GO_CODE_NAMES[n] if 0 <= n < len(_GO_CODE_NAMES) else f"Code({n})"
    return f"rpc error: code = {name} desc = {message}"


def _state_only(resp: Message) -> bool:
    """Whether a hook response sets nothing but its state changes."""
    return all(fd.name == "changes" for fd, _ in resp.ListFields()) and len(_unknown_fields(resp)) == 0


def _withheld(e: ExtEntry, hook: int) -> Tuple[str, ...]:
    """The fields of hook's request that e does not receive: the conversation
    without reads_history, the prompt so far without reads_prompt, each only at the
    hooks whose requests have them."""
    out: Tuple[str, ...] = ()
    if not e.spec.reads_history and hook in READS_HISTORY_HOOKS:
        out += _CONVERSATION_FIELDS
    if not e.spec.reads_prompt and hook in READS_PROMPT_HOOKS:
        out += _PROMPT_FIELDS
    return out


def _without(req: Message, names: Tuple[str, ...]) -> None:
    """Clear the fields of req named in names that its message has."""
    for name in names:
        if name in req.DESCRIPTOR.fields_by_name:
            req.ClearField(name)


class PluginService(plugin_pb2_grpc.PluginServicer):
    """The Plugin service for one Plugin: new_server() builds it, serve() serves it.

    Each hook RPC finds the extension named in HookCall.extension, builds the Call,
    runs the extension's method, checks the result and attaches the state changes;
    RunBatch does that for several extensions at one hook in one round trip, and
    Dispatch for batch after batch over one stream.
    Each may also be called directly, in the same process, with context None: then a
    refusal raises Refusal instead of aborting an RPC.

    A hook method (or a tool's run) may be `async def`: its coroutine runs on the
    plugin's one long-lived event loop (loop, exocortex.aio), the calling thread
    waiting for it, so a task it starts lives on after the call and a later call
    can await it; the call's deadline and the host's cancellation cancel the
    coroutine (DEADLINE_EXCEEDED, CANCELLED), not the tasks it started."""

    def __init__(self, built: Built, logger: Logger, host: Optional[Callable[[], object]] = None,
                 loop: Optional[PluginLoop] = None) -> None:
        self._b = built
        self._logger = logger
        self._host = host
        self.loop = loop if loop is not None else PluginLoop()
        for info in HOOKS:
            setattr(self, info.method, self._hook_method(info))

    @property
    def manifest(self) -> manifest_pb2.ManifestResponse:
        m = manifest_pb2.ManifestResponse()
        m.CopyFrom(self._b.manifest)
        return m

    def set_host(self, host: Callable[[], object]) -> None:
        self._host = host

    # --- RPCs -------------------------------------------------------------------

    def Manifest(self, request: manifest_pb2.ManifestRequest, context) -> manifest_pb2.ManifestResponse:
        v = request.protocol_version
        if v not in (0, PROTOCOL_VERSION):
            return _refuse(context, grpc.StatusCode.FAILED_PRECONDITION,
                           f'plugin "{self._b.manifest.plugin}" speaks protocol version {PROTOCOL_VERSION}, '
                           f"the host asked for {v}")
        return self.manifest

    def ExecuteTool(self, request: plugin_pb2.ExecuteToolRequest, context) -> plugin_pb2.ExecuteToolResponse:
        try:
            return self._execute_tool(request, context)
        except Refusal as r:
            return _refuse(context, r.code, r.message)

    def RunBatch(self, request: plugin_pb2.BatchRequest, context) -> plugin_pb2.BatchResponse:
        try:
            return self._run_batch(request, context)
        except Refusal as r:
            return _refuse(context, r.code, r.message)

    def Dispatch(self, request_iterator: Iterator[plugin_pb2.BatchRequest], context) -> Iterator[plugin_pb2.BatchResponse]:
        """RunBatch over one long-lived stream: each batch the host sends is answered,
        in order, exactly as RunBatch answers it, and the stream ends cleanly when the
        host closes its side. The extensions of a batch see its timeout_ms as their
        call's deadline (Call.time_remaining(), Call.is_active()), counted from when
        the batch arrived, and a batch whose deadline passes before an extension
        starts is refused with DEADLINE_EXCEEDED. A batch RunBatch would refuse (no
        hook request, the deadline passed) ends the stream with that refusal: the
        host opens another. The stream holds one of the server's worker threads while
        it is open."""
        for request in request_iterator:
            try:
                resp = self._run_batch(request, _BatchDeadline(context, request.timeout_ms))
            except Refusal as r:
                _refuse(context, r.code, r.message)
                return
            yield resp

    def _hook_method(self, info: HookInfo) -> Callable[[Message, Any], Message]:
        def rpc(request: Message, context) -> Message:
            try:
                return self._handle(info, request, context)
            except Refusal as r:
                return _refuse(context, r.code, r.message)
        rpc.__name__ = info.method
        return rpc

    # --- dispatch ---------------------------------------------------------------

    def _served_at(self, hook: int) -> str:
        names = sorted(n for n, e in self._b.exts.items() if hook in e.hooks)
        return ", ".join(names) if names else "none at this hook"

    def _handle(self, info: HookInfo, request: Message, rpc: Any = None) -> Message:
        plugin = self._b.manifest.plugin
        if not request.HasField("call"):
            raise Refusal(grpc.StatusCode.INVALID_ARGUMENT, f'plugin "{plugin}": {info.name} request without a HookCall')
        hc = request.call
        e = self._b.exts.get(hc.extension)
        if e is None or info.hook not in e.hooks:
            raise Refusal(grpc.StatusCode.NOT_FOUND,
                          f'plugin "{plugin}" has no extension "{hc.extension}" at {info.name} '
                          f"(it serves: {self._served_at(info.hook)})")
        c = self._new_call(e, info, hc, rpc)
        try:
            return self._handle_call(info, request, e, c)
        finally:
            c._close()  # a change after this is refused (Call._record)

    def _handle_call(self, info: HookInfo, request: Message, e: ExtEntry, c: Call) -> Message:
        plugin = self._b.manifest.plugin
        method = getattr(e.ext, info.name)
        # The request as received, to tell a handler that changed it (_readonly.py).
        before = info.request()
        before.CopyFrom(request)
        resp = self._protect(c, info.name, lambda: self._finish(method(c, request), c, info.name))
        err = c.err()
        if err is not None:
            raise Refusal(grpc.StatusCode.FAILED_PRECONDITION, str(err))
        path, top = request_change(before, request)
        if path:
            raise Refusal(grpc.StatusCode.FAILED_PRECONDITION, mutation_error(plugin, e.spec.name, info.name, path, top))
        if resp is None:
            resp = info.response()  # no change
        elif not isinstance(resp, info.response):
            raise Refusal(grpc.StatusCode.INTERNAL,
                          f'extension "{e.spec.name}" returned {type(resp).__name__} at {info.name}, '
                          f"want exocortex.v1.{info.response.__name__} or None")
        if info.prompt and len(resp.prompt_blocks) > 0 and not e.spec.injects_prompt:
            raise Refusal(grpc.StatusCode.FAILED_PRECONDITION,
                          f'extension "{e.spec.name}" returned prompt blocks at {info.name} '
                          "but its Spec does not declare injects_prompt")
        resp.changes.CopyFrom(c._changes())
        return resp

    def _run_batch(self, request: plugin_pb2.BatchRequest, rpc: Any = None) -> plugin_pb2.BatchResponse:
        """Run consecutive extensions at one hook, each exactly as its own call would
        run it: extension i gets its own copy of the hook's request with calls[i], and
        the state it reads carries the writes and resets of the extensions before it.
        An extension's failure is its result's error, and the batch goes on. The batch
        stops after a result that sets anything besides state changes, because the
        next extension's request then depends on how the host takes that result
        (appended prompt blocks, rewritten arguments, a replaced tool result); the
        host sends the rest again. The host includes the conversation, and the prompt
        so far, when any extension of the batch reads it (reads_history,
        reads_prompt); the others get the request without it, as their own call
        would."""
        plugin = self._b.manifest.plugin
        which = request.WhichOneof("request")
        if which is None:
            raise Refusal(grpc.StatusCode.INVALID_ARGUMENT, f'plugin "{plugin}": a batch without a hook request')
        # The field is named for the hook (its number is the hook's only up to 15).
        info = lookup(which)
        hook = info.hook if info is not None else which
        if info is None:
            raise Refusal(grpc.StatusCode.INVALID_ARGUMENT, f'plugin "{plugin}": a batch for unknown hook {which}')
        hook = info.hook
        base = getattr(request, which)
        result_field = which

        # The batch's state changes so far: a value, or None for a reset.
        written: Dict[str, Optional[any_pb2.Any]] = {}
        out = plugin_pb2.BatchResponse()
        for hc in request.calls:
            if rpc is not None and not rpc.is_active():
                left = rpc.time_remaining()
                if left is not None and left <= 0:
                    raise Refusal(grpc.StatusCode.DEADLINE_EXCEEDED, "context deadline exceeded")
                raise Refusal(grpc.StatusCode.CANCELLED, "context canceled")
            # Each extension gets its own request: one that changes its request in
            # place must not change the next one's.
            req = info.request()
            req.CopyFrom(base)
            e = self._b.exts.get(hc.extension)
            if e is not None:
                _without(req, _withheld(e, hook))
            req.call.CopyFrom(self._overlay(hc, written))
            res = out.results.add()
            # Each extension has its own deadline in a batch, whose call or stream
            # deadline covers all of them; a miss is its error, even when it returned.
            own = _BatchDeadline(rpc, hc.timeout_ms) if hc.timeout_ms > 0 else rpc
            start = time.perf_counter_ns()
            try:
                resp = self._handle(info, req, own)
                if hc.timeout_ms > 0 and time.perf_counter_ns() - start > hc.timeout_ms * 1_000_000 \
                        and (rpc is None or rpc.is_active()):
                    raise Refusal(grpc.StatusCode.DEADLINE_EXCEEDED,
                                  f'extension "{hc.extension}" did not finish within its deadline of '
                                  f"{_go_duration(hc.timeout_ms)}")
            except Refusal as r:
                res.error = _status_text(r.code, r.message)
                continue
            finally:
                res.duration_us = min((time.perf_counter_ns() - start) // 1000, _UINT32_MAX)
            getattr(res, result_field).CopyFrom(resp)
            if not _state_only(resp):
                break
            for w in resp.changes.writes:
                written[w.key] = w.value
            for k in resp.changes.resets:
                written[k] = None
        return out

    def _overlay(self, hc: context_pb2.HookCall, written: Dict[str, Optional[any_pb2.Any]]) -> context_pb2.HookCall:
        """hc with the batch's writes applied to the keys its extension reads; hc
        itself is left alone."""
        e = self._b.exts.get(hc.extension)
        if not written or e is None:
            return hc
        out = context_pb2.HookCall(extension=hc.extension, timeout_ms=hc.timeout_ms)
        if hc.HasField("context"):
            out.context.CopyFrom(hc.context)
        sent = set()
        for st in hc.state:
            sent.add(st.key)
            if st.key not in written:
                out.state.add().CopyFrom(st)
            elif written[st.key] is not None:  # a reset key is absent
                out.state.add(key=st.key).value.CopyFrom(written[st.key])
        for k, v in written.items():
            if v is not None and k not in sent and k in e.reads:
                out.state.add(key=k).value.CopyFrom(v)
        return out

    def _new_call(self, e: ExtEntry, info: HookInfo, hc: context_pb2.HookCall, rpc: Any) -> Call:
        state = {st.key: st.value for st in hc.state if st.HasField("value")}
        return Call(
            extension=e.spec.name, hook=info.hook,
            context=hc.context if hc.HasField("context") else None,
            logger=self._logger.with_attrs(extension=e.spec.name, hook=info.name),
            reads=e.reads, writes=e.writes, state=state, host=self._host, rpc=rpc,
            plugin=self._b.manifest.plugin)

    def _finish(self, out: Any, c: Call, where: str) -> Any:
        """out, or, when the method was a coroutine function, what its coroutine
        returns, run on the plugin's event loop within c's deadline."""
        if not asyncio.iscoroutine(out):
            return out
        return self.loop.run(out, f"{c._who()} at {where}", c._rpc)

    def _protect(self, c: Call, where: str, run: Callable[[], Any]) -> Any:
        """Run an extension's method or a tool, turning its exceptions into refusals:
        StatusError passes through, HookError is UNKNOWN, anything else INTERNAL with
        the head of the traceback (the whole traceback is logged). The plugin keeps
        serving."""
        try:
            return run()
        except StatusError as s:
            raise Refusal(s.code, s.details) from None
        except HookError as h:
            raise Refusal(grpc.StatusCode.UNKNOWN, f"{c._who()} at {where}: {h}") from None
        except CallEnded as ce:
            code = grpc.StatusCode.DEADLINE_EXCEEDED if ce.deadline else grpc.StatusCode.CANCELLED
            raise Refusal(code, f"{c._who()} at {where}: {ce}") from None
        except (Exception, SystemExit) as x:  # sys.exit() in a hook must not end the plugin
            c.logger.error(f"exception in {c._who()}", error=f"{type(x).__name__}: {x}",
                           stack="".join(traceback.format_exception(type(x), x, x.__traceback__)))
            raise Refusal(grpc.StatusCode.INTERNAL,
                          f"{c._who()} raised at {where}: {type(x).__name__}: {x}\n{_stack_head(x)}") from None

    def _execute_tool(self, request: plugin_pb2.ExecuteToolRequest, rpc: Any = None) -> plugin_pb2.ExecuteToolResponse:
        plugin = self._b.manifest.plugin
        name = request.tool_call.name
        t = self._b.tools.get(name)
        if t is None:
            served = ", ".join(sorted(self._b.tools)) or "no tools"
            raise Refusal(grpc.StatusCode.NOT_FOUND, f'plugin "{plugin}" has no tool "{name}" (it serves: {served})')
        raw = request.tool_call.args_json
        if not raw.strip():
            raw = "{}"
        try:
            args = json.loads(raw)
        except ValueError:
            raise Refusal(grpc.StatusCode.INVALID_ARGUMENT,
                          f'tool "{name}": args_json is not valid JSON: {json.dumps(raw[:200])}') from None
        c = Call(extension=name, hook=manifest_pb2.HOOK_UNSPECIFIED,
                 context=request.call.context if request.call.HasField("context") else None,
                 logger=self._logger.with_attrs(tool=name), tool=name, host=self._host, rpc=rpc)
        failure: Optional[ToolError] = None

        def run() -> Any:
            nonlocal failure
            try:
                return self._finish(t.run(c, args), c, "ExecuteTool")
            except ToolError as f:
                failure = f
                return f.result
        res = self._protect(c, "ExecuteTool", run)
        err = c.err()
        if err is not None:
            raise Refusal(grpc.StatusCode.FAILED_PRECONDITION, str(err))
        out = plugin_pb2.ExecuteToolResponse()
        if isinstance(res, str):
            out.result.content = res
        elif isinstance(res, context_pb2.ToolResult):
            out.result.CopyFrom(res)
        elif res is not None:
            raise Refusal(grpc.StatusCode.INTERNAL,
                          f'tool "{name}" returned {type(res).__name__}, want a ToolResult, a str or None')
        if failure is not None:
            out.result.error = str(failure)
        return out


class _BatchDeadline:
    """The call context the extensions of one Dispatch batch see: the stream's
    (cancelled when the host drops the stream), ending also timeout_ms after the
    batch arrived, since a stream has no deadline per message. It answers the two
    questions Call and _run_batch ask of a gRPC context."""

    def __init__(self, stream: Any, timeout_ms: int) -> None:
        self._stream = stream
        self._end = time.monotonic() + timeout_ms / 1000 if timeout_ms > 0 else None

    def time_remaining(self) -> Optional[float]:
        left = self._stream.time_remaining() if self._stream is not None else None
        if self._end is not None:
            mine = max(0.0, self._end - time.monotonic())
            left = mine if left is None else min(left, mine)
        return left

    def is_active(self) -> bool:
        if self._stream is not None and not self._stream.is_active():
            return False
        return self._end is None or time.monotonic() < self._end


def _go_duration(ms: int) -> str:
    """ms as Go's time.Duration prints it (500ms, 1.5s, 1m30s), so that both
    SDKs word a missed deadline alike."""
    if ms < 1000:
        return f"{ms}ms"
    minutes, rest = divmod(ms, 60_000)
    seconds = f"{rest / 1000:.3f}".rstrip("0").rstrip(".") + "s"
    return (f"{minutes}m" if minutes else "") + seconds


def _refuse(context, code: grpc.StatusCode, message: str):
    if context is None:
        raise Refusal(code, message)
    context.abort(code, message)


def new_server(plugin: Plugin) -> PluginService:
    """Validate plugin and return the Plugin service that serves it, for use in the
    same process (serve() uses it too). InvalidPlugin lists every problem found, each
    naming the extension, key or tool at fault."""
    built = build(plugin)
    logger = plugin.logger or Logger(module=plugin.name)
    return PluginService(built, logger)


__all__ = ["PROTOCOL_VERSION", "PluginService", "Refusal", "new_server"]
