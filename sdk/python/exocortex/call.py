"""The Call: one hook call (or tool call) as an extension sees it."""

from __future__ import annotations

import json
import threading
from typing import TYPE_CHECKING, Any, Callable, Dict, FrozenSet, List, Optional, Sequence

import grpc
from google.protobuf import any_pb2

from exocortex.hooks import hook_name
from exocortex.log import Logger
from exocortex.v1 import context_pb2, host_pb2

if TYPE_CHECKING:  # pragma: no cover
    from exocortex.keys import Key


class StateError(Exception):
    """State-access errors recorded during a call (an undeclared read or write, a
    value that does not decode, a set with None). Call.err() returns one; when the
    method ends with one recorded, the call fails with FAILED_PRECONDITION."""


# The log attribute by which a plugin's record tells the host of an event, and
# the event of a state change refused because its call had returned (as Go's
# sdk.EventAttr and sdk.LateStateWrite).
EVENT_ATTR = "exocortex_event"
LATE_STATE_WRITE = "late_state_write"


class LateStateWriteError(StateError):
    """A state change made after the call had returned (from a task the method
    left running: asyncio.create_task, a thread). State changes travel with the
    call's response, so the change is refused: the host is told (it warns naming
    the plugin, extension and key) and this is raised where the change was made."""


class Call:
    """One hook call (or tool call) as the extension sees it: the ACP context, a
    logger that reaches the host's log, and the state the extension declared. Typed
    keys read and write through it (Key.get, Key.set, Key.reset); the SDK puts the
    recorded changes into the response.

    A Call is valid only during the method it is passed to. Threads the method starts
    may use it if they finish before the method returns. State changes travel with
    the response, so a change made after the method returned (by a task it left
    running) is refused: it raises LateStateWriteError and the host warns."""

    def __init__(
        self,
        *,
        extension: str,
        hook: int,
        context: Optional[context_pb2.Context],
        logger: Logger,
        reads: FrozenSet[str] = frozenset(),
        writes: FrozenSet[str] = frozenset(),
        state: Optional[Dict[str, any_pb2.Any]] = None,
        tool: str = "",
        host: Optional[Callable[[], object]] = None,
        rpc: Optional[object] = None,
        plugin: str = "",
    ) -> None:
        self._plugin = plugin
        self._closed = False
        self._extension = extension
        self._hook = hook
        self._context = context if context is not None else context_pb2.Context()
        self._logger = logger
        self._reads = reads
        self._writes = writes
        self._state = dict(state or {})
        self._tool = tool
        self._host = host
        self._rpc = rpc
        self._lock = threading.Lock()
        self._order: List[str] = []
        self._pending: Dict[str, Optional[any_pb2.Any]] = {}
        self._errors: List[str] = []

    @property
    def context(self) -> context_pb2.Context:
        """The ACP context of the call. Never None."""
        return self._context

    @property
    def extension(self) -> str:
        """The name of the extension being called (for a tool call, the tool's)."""
        return self._extension

    @property
    def hook(self) -> int:
        """The hook being run (manifest_pb2.HOOK_*); HOOK_UNSPECIFIED for a tool call."""
        return self._hook

    @property
    def hook_name(self) -> str:
        """The snake_case name of the hook, e.g. "message_loop_end"; "" for a tool."""
        return hook_name(self._hook)

    @property
    def tool(self) -> str:
        """The tool's name when the call runs a tool, else ""."""
        return self._tool

    @property
    def logger(self) -> Logger:
        """Writes to the host's log with the extension and hook (or tool) attached."""
        return self._logger

    def time_remaining(self) -> Optional[float]:
        """Seconds left before the host's deadline for this call (the host kills the
        plugin when it passes); None when the call has no deadline."""
        left = self._rpc.time_remaining() if self._rpc is not None else None
        return None if left is None or left > 1e9 else left  # gRPC answers "forever" with a huge number

    def is_active(self) -> bool:
        """False once the host has given up on the call (deadline passed, turn
        cancelled): a long-running method may stop early."""
        return self._rpc.is_active() if self._rpc is not None else True

    def host(self):
        """Return a client (exocortex.v1.host_pb2_grpc.HostStub) for the services the
        host offers its plugins, e.g. RunSubordinate. The connection is made on first
        use, through go-plugin's broker; RuntimeError when the plugin was not started
        by an Exocortex host."""
        if self._host is None:
            raise RuntimeError("the host's services are not reachable from this call")
        return self._host()

    def report_output(self, delta: str) -> str:
        """Report a piece of the partial output of the tool call this Call runs, while
        the tool runs: the host fires tool_output_update with it and shows it to the
        operator. Returns what the operator was shown of the output so far (the
        extensions may mask or shorten it); the tool's result is not changed by it.
        Raises RuntimeError naming the call when the host refuses (no agent runs this
        call, or it is over) or cannot be reached."""
        try:
            resp = self.host().ReportToolOutput(host_pb2.ReportToolOutputRequest(context=self._context, delta=delta))
        except grpc.RpcError as e:
            raise RuntimeError(f"reporting the output of tool call {self._context.context_id}: "
                               f"{e.details()}") from None
        return resp.display

    def report_embedding_model_changed(self, store: str, old_model: str, old_dims: int,
                                       new_model: str, new_dims: int) -> None:
        """Report that the memory store in the directory store was built with the
        model old_model (old_dims dimensions) and is now re-embedded with new_model:
        the host fires embedding_model_changed. Raises RuntimeError naming the store
        when the host refuses or cannot be reached."""
        try:
            self.host().ReportEmbeddingModelChanged(host_pb2.ReportEmbeddingModelChangedRequest(
                context=self._context, store=store, old_model=old_model, old_dims=int(old_dims),
                new_model=new_model, new_dims=int(new_dims)))
        except grpc.RpcError as e:
            raise RuntimeError(f"reporting the embedding model change of {store}: {e.details()}") from None

    def use_memory(self, tool: str, args: Dict[str, Any]) -> context_pb2.ToolResult:
        """Run the memory tool (memory_load, memory_save, memory_forget,
        memory_delete) with the arguments object args, through the host, in the
        plugin that serves it, with this call's context: how a plugin reads and
        writes Exocortex's memory store. Returns the tool's result (its error set
        when the tool failed); raises RuntimeError naming the tool when the host
        refuses (another tool, no memory plugin) or cannot be reached."""
        try:
            resp = self.host().UseMemory(host_pb2.UseMemoryRequest(
                context=self._context, tool=tool, args_json=json.dumps(args)))
        except grpc.RpcError as e:
            raise RuntimeError(f"using the memory store ({tool}): {e.details()}") from None
        return resp.result

    def memory(self, source: str = "") -> "Memory":
        """The home's memory store as this call reaches it, through the host (the
        exocortex.v1.MemoryService of memory.proto, the same API the built-in
        memory extensions use). Writes carry this call's session and message and
        source (default: the host names the plugin, "plugin:NAME"). The plugin must
        declare Plugin(uses_memory=True, memory_write_areas=[...]); the host refuses
        a write to another area with an error naming the plugin and the area."""
        return Memory(self, source)

    def call_utility_model(self, system: str, message: str, on_delta: Optional[Callable[[str], None]] = None,
                           purpose: str = "", timeout: Optional[float] = None) -> str:
        """Run one completion of the host's utility model (the model of history
        compression; the chat model when none is configured), with the hooks
        util_model_call_before and util_model_call_after around it, and return the
        response as the extensions at util_model_call_after left it (Agent Zero's
        agent.call_utility_model). on_delta, when given, receives each piece of the
        model's text as it arrives (before util_model_call_after). purpose is what
        the utility hooks see ("" is "plugin:<name>"); timeout, in seconds, bounds
        the call on this side too (default: what is left of this call's deadline,
        time_remaining(); the host has its own bound). The plugin must
        declare Plugin(uses_utility_model=True). Raises RuntimeError naming what
        refused the call (the declaration, a limit, the deadline, the model)."""
        if timeout is None and self.is_active():
            # A task that outlived its call (a background DeferredTask) has only
            # the host's bound.
            timeout = self.time_remaining()
        replies = self.host().CallUtilityModel(host_pb2.CallUtilityModelRequest(
            context=self._context, system=system, message=message, purpose=purpose,
            stream=on_delta is not None), timeout=timeout)
        try:
            for r in replies:
                if r.done:
                    return r.response
                if on_delta is not None:
                    on_delta(r.delta)
        except grpc.RpcError as e:
            raise RuntimeError(f"calling the utility model: {e.details()}") from None
        finally:
            replies.cancel()  # ends the stream when on_delta raised
        raise RuntimeError("calling the utility model: the host ended the reply without an answer")

    def err(self) -> Optional[StateError]:
        """The state-access errors recorded so far, joined; None when there are none.
        When it is not None at the end of the method, the call fails with it whatever
        the method returned."""
        with self._lock:
            return StateError("\n".join(self._errors)) if self._errors else None

    # --- used by Key ------------------------------------------------------------

    def _who(self) -> str:
        kind = "tool" if self._tool else "extension"
        return f'{kind} "{self._extension}"'

    def _fail(self, message: str) -> None:
        with self._lock:
            self._errors.append(message)

    def _check(self, key: "Key", write: bool) -> bool:
        """Refuse an access the extension did not declare, recording the error."""
        if self._tool:
            self._fail(
                f'tool "{self._tool}": state key "{key.name}": tools have no state access in protocol v1 '
                "(read and write state from an extension at tool_execute_before or tool_execute_after)")
            return False
        declared, field = (self._writes, "writes") if write else (self._reads, "reads")
        if key.name not in declared:
            verb = "write" if write else "read"
            self._fail(f'extension "{self._extension}": {verb} of state key "{key.name}", '
                       f"which its Spec does not list in {field}")
            return False
        return True

    def _value(self, name: str) -> Optional[any_pb2.Any]:
        with self._lock:
            if name in self._pending:
                return self._pending[name]
            return self._state.get(name)

    def _record(self, name: str, value: Optional[any_pb2.Any]) -> None:
        with self._lock:
            closed = self._closed
            if not closed:
                if name not in self._pending:
                    self._order.append(name)
                self._pending[name] = value
        if closed:
            self._logger.error(
                "a state change after the call returned was refused: state changes travel with the call's "
                "response; make them before the method returns (await the task), or at the extension's next call",
                **{EVENT_ATTR: LATE_STATE_WRITE, "plugin": self._plugin, "key": name})
            raise LateStateWriteError(
                f'plugin "{self._plugin}": {self._who()} changed state key "{name}" after its call at '
                f"{self.hook_name} returned; the change is refused, since state changes travel with the call's "
                "response: make it before the method returns (await the task), or at the extension's next call")

    def _close(self) -> None:
        """Mark the method returned: later changes are refused (_record)."""
        with self._lock:
            self._closed = True

    def _changes(self) -> context_pb2.StateChanges:
        """The StateChanges of the response, in the order keys were first changed;
        the last change of a key wins."""
        sc = context_pb2.StateChanges()
        with self._lock:
            self._closed = True  # what is not in sc now never reaches the host
            for name in self._order:
                v = self._pending[name]
                if v is None:
                    sc.resets.append(name)
                else:
                    sc.writes.add(key=name).value.CopyFrom(v)
        return sc


class Memory:
    """Call.memory(): the common memory calls, shaped for Python. client() is the
    generated stub (exocortex.v1.memory_pb2_grpc.MemoryServiceStub) for the rest.
    Every method raises RuntimeError with the host's message when the host refuses
    (no uses_memory, an undeclared area) or the service fails."""

    def __init__(self, call: "Call", source: str = "") -> None:
        self._call = call
        self._source_name = source

    def client(self):
        if self._call._host is None:
            raise RuntimeError("the host's memory service is not reachable from this call")
        return self._call._host.memory()

    def source(self):
        from exocortex.v1 import memory_pb2

        cx = self._call.context
        return memory_pb2.MemorySource(session=cx.session_id, message=cx.message_id, source=self._source_name)

    def _do(self, what: str, fn):
        try:
            return fn(self.client())
        except grpc.RpcError as e:
            raise RuntimeError(f"{what}: {e.details()}") from None

    def search(self, query: str, limit: int = 0, areas: Sequence[str] = (), tags: Sequence[str] = (),
               record_access: bool = False):
        """Hybrid recall for query (a blank query lists what the filter admits);
        returns the MemorySearchResponse (hits with record, score and why)."""
        from exocortex.v1 import memory_pb2

        opts = memory_pb2.MemorySearchOptions(limit=limit, record_access=record_access,
                                              filter=memory_pb2.MemoryFilter(areas=list(areas), tags=list(tags)))
        if record_access:
            opts.source.CopyFrom(self.source())
        return self._do(f"searching memory for {query!r}",
                        lambda c: c.Search(memory_pb2.MemorySearchRequest(query=query, options=opts)))

    def get(self, id: str = "", area: str = "", key: str = ""):
        """The record with id, or holding key in area; None when there is none."""
        from exocortex.v1 import memory_pb2

        resp = self._do(f"getting memory record {id or key!r}",
                        lambda c: c.Get(memory_pb2.MemoryGetRequest(id=id, area=area, key=key)))
        return resp.record if resp.found else None

    def save(self, *records):
        """Upsert MemoryInput records (or dicts of their fields) in one journal
        write; returns the records as stored."""
        from exocortex.v1 import memory_pb2

        ins = [r if isinstance(r, memory_pb2.MemoryInput) else memory_pb2.MemoryInput(**r) for r in records]
        resp = self._do(f"saving {len(ins)} memory record(s)",
                        lambda c: c.Save(memory_pb2.MemorySaveRequest(records=ins, source=self.source())))
        return list(resp.records)

    def archive(self, id: str, reason: str = "") -> None:
        from exocortex.v1 import memory_pb2

        self._do(f"archiving memory record {id}", lambda c: c.Archive(
            memory_pb2.MemoryArchiveRequest(id=id, reason=reason, source=self.source())))

    def delete(self, id: str, reason: str = "") -> None:
        from exocortex.v1 import memory_pb2

        self._do(f"deleting memory record {id}", lambda c: c.Delete(
            memory_pb2.MemoryDeleteRequest(id=id, reason=reason, source=self.source())))

    def record_access(self, *ids: str) -> None:
        from exocortex.v1 import memory_pb2

        if ids:
            self._do(f"recording the access of {len(ids)} memory record(s)", lambda c: c.RecordAccess(
                memory_pb2.MemoryRecordAccessRequest(ids=list(ids), source=self.source())))

    def census(self, areas: Sequence[str] = ()):
        """Active records and their tags per area: {area: MemoryAreaCensus}."""
        from exocortex.v1 import memory_pb2

        resp = self._do("counting memory records", lambda c: c.Census(
            memory_pb2.MemoryCensusRequest(filter=memory_pb2.MemoryFilter(areas=list(areas)))))
        return dict(resp.areas)
