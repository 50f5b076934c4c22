"""The Plugin service: dispatches each hook call to the extension it names."""

from __future__ import annotations

import json
import traceback
from typing import Any, Callable, Optional

import grpc
from google.protobuf.message import Message

from exocortex._manifest import Built, ExtEntry, build
from exocortex.call import Call
from exocortex.hooks import HOOKS, HookInfo
from exocortex.log import Logger
from exocortex.spec import HookError, Plugin, StatusError, ToolError
from exocortex.v1 import context_pb2, manifest_pb2, plugin_pb2, plugin_pb2_grpc

# The plugin protocol this SDK speaks: package exocortex.v1.
PROTOCOL_VERSION = 1


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


class PluginService(plugin_pb2_grpc.PluginServicer):
    """The Plugin service for one Plugin: new_server() builds it, serve() serves it.

    Each hook RPC finds the extension named in HookCall.extension, builds the Call,
    runs the extension's method, checks the result and attaches the state changes.
    Each may also be called directly, in the same process, with context None: then a
    refusal raises Refusal instead of aborting an RPC."""

    def __init__(self, built: Built, logger: Logger, host: Optional[Callable[[], object]] = None) -> None:
        self._b = built
        self._logger = logger
        self._host = host
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
        method = getattr(e.ext, info.name)
        resp = self._protect(c, info.name, lambda: method(c, request))
        err = c.err()
        if err is not None:
            raise Refusal(grpc.StatusCode.FAILED_PRECONDITION, str(err))
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

    def _new_call(self, e: ExtEntry, info: HookInfo, hc: context_pb2.HookCall, rpc: Any) -> Call:
        state = {st.key: st.value for st in hc.state if st.HasField("value")}
        return Call(
            extension=e.spec.name, hook=info.hook,
            context=hc.context if hc.HasField("context") else None,
            logger=self._logger.with_attrs(extension=e.spec.name, hook=info.name),
            reads=e.reads, writes=e.writes, state=state, host=self._host, rpc=rpc)

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
                return t.run(c, args)
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
