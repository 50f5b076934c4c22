"""An Agent Zero (v1.7) compatibility layer: serves Agent Zero extension files,
unchanged, as Exocortex extensions.

An Agent Zero extension is a file extensions/python/<hook>/_NN_name.py holding a
subclass of Extension with `async def execute(self, loop_data=LoopData(), **kwargs)`.
`exocortex plugins port` copies such files into a plugin and writes shim modules
(helpers/extension.py, agent.py) that re-export the classes here, so the files'
own imports (`from helpers.extension import Extension`, `from agent import
LoopData, Agent`) resolve to this layer.

What the layer maps:
  - the hook directory onto the Exocortex hook of the same name (HOOK_MAP), the
    numeric prefix onto the extension's order;
  - loop_data.iteration, system, user_message, history_output, last_response from
    the hook's request;
  - entries added to loop_data.extras_temporary / extras_persistent (and strings
    appended to loop_data.system at system_prompt) onto PromptBlocks of the
    response, at the three hooks whose responses carry prompt blocks;
  - self.agent.get_data/set_data onto typed state keys "a0_<plugin>_<key>"
    (google.protobuf.Value, session scope; the plugin's name keeps two ported
    trees in one home apart), declared from the keys the file names statically
    (Python ast); a key seen only at run time is kept in the process and logged,
    as the static scan missed it;
  - every key a file reads or writes at run time is recorded in the plugin's
    .a0compat/observed.json, which `exocortex lint` compares with the keys the
    port found statically;
  - the keyword arguments Agent Zero passes at the tool, stream, model-call,
    history, error and text-editor hooks (tool_name, tool_args, response,
    stream_data, call_data, content_data, msg, exception_data, text, data, ctx),
    and what a file changes in them onto the hook's response where it has a
    field (KWARGS); a change it has no field for is logged as lost, and an
    exception at text_editor_write_before/patch_before refuses the edit (REFUSES);
  - self.agent.context.log onto the host log;
  - self.agent.call_utility_model onto the host's utility model (exocortex.a0.utility);
  - the Agent Zero helper modules real files import (helpers.files, secrets,
    plugins, errors, dirty_json, defer, print_style, log, tokens, settings,
    localization, persist_chat, subagents, tool_policy, the memory plugin's
    Memory and the model-config plugin's model_config) onto the stand-ins of
    exocortex.a0, through the shims
    `plugins port` writes (scaffold/a0port.Modules is the list), and an import
    of another extension file of the tree (plugins.<p>.extensions.python.<hook>.<file>)
    onto its ported copy (_TreeFinder).
"""

from __future__ import annotations

import ast
import asyncio
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import re
import sys
import threading
from typing import Any, Dict, List, Optional, Set, Tuple

from google.protobuf import json_format, struct_pb2

from exocortex import aio
from exocortex.a0 import _host, _runtime, utility
from exocortex.hooks import HOOKS, lookup
from exocortex.keys import Key
from exocortex.spec import Plugin, Spec
from exocortex.v1 import context_pb2, manifest_pb2

# Agent Zero hook directory names with an Exocortex hook of the same meaning: every
# hook of the protocol is named as Agent Zero names it, so a directory maps onto the
# hook of its own name (and a hook added to the protocol is served at once).
HOOK_MAP: Dict[str, str] = {h.name: h.name for h in HOOKS}

# Where a ported plugin records the keys its files use at run time (Observed),
# relative to the plugin's directory.
OBSERVED = os.path.join(".a0compat", "observed.json")

_FILE_RE = re.compile(r"^_(\d+)_([A-Za-z0-9_]+)\.py$")


class LoopData:
    """Agent Zero's per-monologue loop data, filled from the hook's request."""

    def __init__(self, **kwargs: Any) -> None:
        self.iteration: int = -1
        self.system: List[str] = []
        self.user_message: Any = None
        self.history_output: List[Any] = []
        self.extras_temporary: Dict[str, Any] = {}
        self.extras_persistent: Dict[str, Any] = {}
        self.last_response: str = ""
        self.params_temporary: Dict[str, Any] = {}
        self.params_persistent: Dict[str, Any] = {}
        self.current_tool = None
        # Agent Zero's main prompt file swaps passages of the response prompts
        # through this; Exocortex has no response prompts to swap, so what is put
        # here is kept for the file's own later reads only.
        self.responses_prompt_replacements: Dict[str, str] = {}
        for k, v in kwargs.items():
            setattr(self, k, v)


class _Log:
    """Agent Zero's context.log and its log items: log() returns an item whose
    update()/stream() go to the host log; kvps keeps the item's key-value pairs,
    as Agent Zero's LogItem does."""

    def __init__(self, agent: "Agent") -> None:
        self._agent = agent
        self.kvps: Dict[str, Any] = {}

    def log(self, type: str = "info", heading: str = "", content: str = "", **kwargs: Any) -> "_Log":
        item = _Log(self._agent)
        item._write(type, heading, content, kwargs)
        return item

    def _write(self, type: str, heading: str, content: str, kwargs: Dict[str, Any]) -> None:
        kvps = kwargs.pop("kvps", None)
        if isinstance(kvps, dict):
            self.kvps.update(kvps)
        self.kvps.update({k: v for k, v in kwargs.items() if k != "update_progress"})
        call = self._agent._call
        msg = " ".join(str(s) for s in (heading, content) if s)
        if call is not None and msg:
            call.logger.info(f"[{type}] {msg}")

    def update(self, type: str = "info", heading: str = "", content: str = "", **kwargs: Any) -> None:
        self._write(type, heading, content, kwargs)

    def stream(self, heading: str = "", content: str = "", **kwargs: Any) -> None:
        self._write("info", heading, content, kwargs)


class _Text(str):
    """A message's text where Agent Zero hands a Message: the string itself, with
    the Message's output_text() and content."""

    def output_text(self) -> str:
        return str(self)

    @property
    def content(self) -> str:
        return str(self)


class _History:
    """Agent Zero's agent.history, read-only: the messages of the current call
    (output() as role/content dicts, output_text() as "role: content" lines).
    History belongs to Exocortex's core; nothing here changes it."""

    def __init__(self, messages: Optional[List[Dict[str, Any]]] = None) -> None:
        self._messages = messages or []

    def output(self) -> List[Dict[str, Any]]:
        return list(self._messages)

    def output_text(self, human_label: str = "user", ai_label: str = "ai") -> str:
        return "\n".join(f"{m.get('role', '')}: {m.get('content', '')}" for m in self._messages)


def extensible(fn: Any) -> Any:
    """Agent Zero's @extensible: lets _functions extensions wrap a function. A
    ported tree carries no _functions extensions, so the function is returned as is."""
    return fn


_PROMPT_VAR = re.compile(r"\{\{\s*(\w+)\s*\}\}")


class _Context:
    def __init__(self, agent: "Agent") -> None:
        self.log = _Log(agent)
        self.id = "exocortex"
        self.agent0 = agent


class Observed:
    """The agent-data keys the files of one ported plugin read and write at run time,
    kept in PATH (.a0compat/observed.json in the plugin's directory, which the
    plugin watcher ignores) as {file: {"reads": [...], "writes": [...]}}, file
    relative to the plugin directory. The file is rewritten only when a file uses a
    key for the first time, so a call costs one set lookup."""

    def __init__(self, path: Optional[str]) -> None:
        self.path = path
        self._seen: Dict[str, Dict[str, Set[str]]] = {}
        self._lock = threading.Lock()

    def note(self, file: str, access: str, key: str) -> None:
        per = self._seen.setdefault(file, {"reads": set(), "writes": set()})[access]
        if key in per:
            return
        with self._lock:
            per.add(key)
            self._write()

    def _write(self) -> None:
        if not self.path:
            return
        doc = {f: {a: sorted(ks) for a, ks in v.items()} for f, v in sorted(self._seen.items())}
        try:
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            tmp = f"{self.path}.{os.getpid()}.tmp"
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump(doc, f, indent=1, sort_keys=True)
            os.replace(tmp, self.path)
        except OSError as e:  # the record is for lint; the call goes on without it
            print(f"a0compat: recording observed keys in {self.path}: {e}", file=sys.stderr)


class Agent:
    """The part of Agent Zero's Agent an extension sees: get_data/set_data on typed
    state, context.log on the host log, and attributes (number, agent_name)."""

    def __init__(self, keys: Dict[str, Key], owner: str, file: str = "",
                 observed: Optional[Observed] = None, local: Optional[Dict[str, Any]] = None,
                 held: Optional[Dict[str, Any]] = None) -> None:
        self._keys = keys
        self._owner = owner
        self._file = file
        self._observed = observed if observed is not None else Observed(None)
        self._call = None
        # The last call this agent served: what a task the file started (a
        # DeferredTask, an asyncio task) uses the host's services with (Memory)
        # once the call has answered.
        self._last_call = None
        # Agent data with no typed key (a name computed at run time), shared by
        # every file of the tree as Agent Zero's one agent.data is.
        self._local: Dict[str, Any] = {} if local is None else local
        # Values of declared keys kept in the process instead of typed state
        # (shared by the tree's files): what typed state cannot hold (an asyncio
        # task, a DeferredTask, any object that is not JSON), and what a task
        # writes between calls, when there is no call to write it through.
        self._held: Dict[str, Any] = {} if held is None else held
        self.observed: Set[str] = set()
        self.number = 0
        self.agent_name = "A0"
        self.context = _Context(self)
        self.data = self._local
        self.history = _History()
        # Where read_prompt finds prompt files: the ported plugin's prompts/
        # (the port copies the tree's prompts/*.md there); set by load_tree.
        self.prompts_dir: Optional[str] = None

    def read_prompt(self, file: str, **kwargs: Any) -> str:
        """Agent Zero's read_prompt: the prompt file from the ported plugin's
        prompts/ directory, with {{name}} replaced by kwargs[name]."""
        where = self.prompts_dir or "prompts/"
        path = os.path.join(where, os.path.basename(file))
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            raise FileNotFoundError(
                f"a0compat: {self._owner} reads the prompt file {file!r}, which is not in {where}: "
                f"copy it from your Agent Zero prompts/ directory into {where} ({e.strerror})") from e
        return _PROMPT_VAR.sub(lambda m: str(kwargs.get(m.group(1), m.group(0))), text)

    def concat_messages(self, messages: Any = None, **kwargs: Any) -> str:
        """Agent Zero's concat_messages: the history as "role: content" lines."""
        if isinstance(messages, _History) or messages is None:
            return (messages or self.history).output_text()
        return "\n".join(f"{m.get('role', '')}: {m.get('content', '')}" if isinstance(m, dict) else str(m)
                         for m in messages)

    def parse_prompt(self, file: str, **kwargs: Any) -> str:
        """Agent Zero's parse_prompt, as read_prompt (prompt .py variable files are not run)."""
        return self.read_prompt(file, **kwargs)

    async def call_utility_model(self, system: str, message: str, callback: Any = None, background: bool = False) -> str:
        """Agent Zero's call_utility_model, on the host's utility model (exocortex.a0.utility)."""
        return await utility.call_utility_model(self, system, message, callback, background)

    def get_data(self, field: str) -> Any:
        self._observed.note(self._file, "reads", field)
        if field in self._held:
            return self._held[field]
        key = self._keys.get(field)
        if key is None or self._call is None:
            self._observe(field)
            return self._local.get(field)
        v = key.get(self._call)
        if v is None:
            return None
        kind = v.WhichOneof("kind")
        if kind == "number_value":
            n = v.number_value
            return int(n) if n.is_integer() else n
        if kind == "string_value":
            return v.string_value
        if kind == "bool_value":
            return v.bool_value
        if kind == "null_value" or kind is None:
            return None
        return _ints(json_format.MessageToDict(v))

    def set_data(self, field: str, value: Any) -> None:
        self._observed.note(self._file, "writes", field)
        key = self._keys.get(field)
        if key is not None and (self._call is None or not _plain(value)):
            self._hold(field, key, value)
            return
        self._held.pop(field, None)
        if key is None or self._call is None:
            self._observe(field)
            self._local[field] = value
            return
        if value is None:
            v = struct_pb2.Value(null_value=struct_pb2.NULL_VALUE)
        elif isinstance(value, bool):
            v = struct_pb2.Value(bool_value=value)
        elif isinstance(value, (int, float)):
            v = struct_pb2.Value(number_value=value)
        elif isinstance(value, str):
            v = struct_pb2.Value(string_value=value)
        else:
            v = struct_pb2.Value()
            json_format.ParseDict(value, v)
        key.set(self._call, v)

    def _hold(self, field: str, key: Key, value: Any) -> None:
        if not _plain(value) and not isinstance(self._held.get(field), type(value)):
            call = self._call or self._last_call
            logger = call.logger if call is not None else _runtime.get().logger
            logger.warning(
                f"a0compat: {self._owner} stores a {type(value).__name__} in agent data {field!r}, declared as the "
                f"shared state key {key.name}: typed state holds JSON values only, so it is kept in the plugin "
                "process (other plugins do not see it; a restart or hot reload loses it, cancelling a task)")
        self._held[field] = value

    def _observe(self, field: str) -> None:
        if field not in self.observed:
            self.observed.add(field)
            if self._call is not None:
                self._call.logger.warning(
                    f"a0compat: {self._owner} uses agent data {field!r}, which the static scan did not find; "
                    "it is kept in the plugin process only (not shared state): name the key as a string literal "
                    "in get_data/set_data so the port declares it")


def _plain(v: Any) -> bool:
    """Whether typed state (a google.protobuf.Value) can hold v: JSON values."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return True
    if isinstance(v, (list, tuple)):
        return all(_plain(x) for x in v)
    if isinstance(v, dict):
        return all(isinstance(k, str) and _plain(x) for k, x in v.items())
    return False


def _ints(v: Any) -> Any:
    """A google.protobuf.Value holds every number as a double: give back the whole
    ones as int, as Agent Zero's agent data kept them (a count stays 2, not 2.0)."""
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, list):
        return [_ints(x) for x in v]
    if isinstance(v, dict):
        return {k: _ints(x) for k, x in v.items()}
    return v


class Response:
    """Agent Zero's tool Response, handed to tool_execute_after as response=."""

    def __init__(self, message: str = "", break_loop: bool = False, additional: Any = None) -> None:
        self.message = message
        self.break_loop = break_loop
        self.additional = additional


class Extension:
    """Agent Zero's Extension base class."""

    def __init__(self, agent: Optional[Agent] = None, **kwargs: Any) -> None:
        self.agent = agent
        self.kwargs = kwargs

    async def execute(self, loop_data: LoopData = LoopData(), **kwargs: Any) -> Any:
        return None


def static_keys(source: str) -> Tuple[Set[str], Set[str]]:
    """Return the agent-data keys a file reads and writes, found in its syntax tree:
    string literals given to get_data and set_data."""
    reads: Set[str] = set()
    writes: Set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
            a = node.args[0]
            if isinstance(a, ast.Constant) and isinstance(a.value, str):
                if node.func.attr == "get_data":
                    reads.add(a.value)
                elif node.func.attr == "set_data":
                    writes.add(a.value)
    return reads, writes


def _ident(s: str) -> str:
    return re.sub(r"[^a-z0-9_]", "_", s.lower())


def key_name(field: str, plugin: str = "") -> str:
    """The name of the state key an Agent Zero data field of plugin maps to:
    a0_<plugin>_<field>, the plugin's name without a leading "a0-" (a0-notes:
    a0_notes_<field>), so two ported trees in one home keep their agent data apart
    as two Agent Zero installations do. scaffold/a0port.KeyName is the same rule."""
    ns = _ident(plugin)
    if ns.startswith("a0_"):
        ns = ns[3:]
    ns = ns.strip("_")
    return f"a0_{ns}_{_ident(field)}" if ns else f"a0_{_ident(field)}"


def key_for(field: str, plugin: str = "") -> Key:
    """The typed state key an Agent Zero data field of plugin maps to (key_name)."""
    return Key(struct_pb2.Value, name=key_name(field, plugin), scope=manifest_pb2.SCOPE_SESSION,
               doc=f"Agent Zero agent data {field!r} of {plugin or 'the ported tree'}, ported.")


def awaits_anything(source: str) -> bool:
    """Whether a module needs the event loop: its code awaits anything (await,
    async for, async with) or uses asyncio (a task started with
    asyncio.create_task needs a running loop even where nothing is awaited)."""
    return any(isinstance(n, (ast.Await, ast.AsyncFor, ast.AsyncWith))
               or (isinstance(n, ast.Name) and n.id in _LOOP_NAMES)
               or (isinstance(n, ast.Attribute) and n.attr in _LOOP_NAMES)
               or (isinstance(n, (ast.Import, ast.ImportFrom))
                   and any(a.name.split(".")[0] == "asyncio" for a in n.names) or getattr(n, "module", None) == "asyncio")
               for n in ast.walk(ast.parse(source)))


_LOOP_NAMES = {"asyncio", "create_task", "ensure_future", "get_running_loop", "get_event_loop"}


def _text(m: Any) -> str:
    return getattr(m, "content", "") if m is not None else ""


def _loop_data(req: Any) -> LoopData:
    ld = LoopData()
    ld.iteration = getattr(req, "iteration", -1)
    history = list(getattr(req, "history", []) or [])
    ld.history_output = [{"role": getattr(m, "role", ""), "content": _text(m)} for m in history]
    users = [m for m in history if str(getattr(m, "role", "")).lower().endswith("user") or getattr(m, "role", "") == 1]
    if users:
        ld.user_message = _Text(_text(users[-1]))
    sp = getattr(req, "system_prompt", None)
    if isinstance(sp, str) and sp:
        ld.system = [sp]
    resp = getattr(req, "response", None)
    if isinstance(resp, str):
        ld.last_response = resp
    return ld


def _args(js: str) -> Dict[str, Any]:
    try:
        v = json.loads(js) if js else {}
    except ValueError:
        return {}
    return v if isinstance(v, dict) else {}


# The keyword arguments Agent Zero v1.7 passes at a hook besides loop_data, built
# from the hook's request, and what a file's changes to them become in the
# response. Each entry: hook -> (make(req) -> kwargs, answer(req, kwargs) -> dict
# of response fields, or {} when nothing changed).
def _tool_before(req: Any) -> Dict[str, Any]:
    tc = getattr(req, "tool_call", None)
    args = _args(tc.args_json) if tc is not None else {}
    return {"tool_name": tc.name if tc is not None else "", "tool_args": args,
            "_sent": json.dumps(args, sort_keys=True)}


def _tool_before_answer(req: Any, kw: Dict[str, Any]) -> Dict[str, Any]:
    now = json.dumps(kw["tool_args"], sort_keys=True, default=str)
    return {"args_json": json.dumps(kw["tool_args"], default=str)} if now != kw["_sent"] else {}


def _tool_after(req: Any) -> Dict[str, Any]:
    tc, res = getattr(req, "tool_call", None), getattr(req, "result", None)
    msg = res.content if res is not None else ""
    return {"tool_name": tc.name if tc is not None else "", "tool_args": _args(tc.args_json) if tc is not None else {},
            "response": Response(message=msg, break_loop=bool(res.break_loop) if res is not None else False),
            "_sent": msg}


def _tool_after_answer(req: Any, kw: Dict[str, Any]) -> Dict[str, Any]:
    msg = getattr(kw["response"], "message", kw["_sent"])
    return {"content": str(msg)} if msg != kw["_sent"] else {}


def _chunk(req: Any) -> Dict[str, Any]:
    d = {"chunk": getattr(req, "delta", ""), "full": getattr(req, "text", "")}
    return {"stream_data": d, "_sent": dict(d)}


def _chunk_answer(req: Any, kw: Dict[str, Any]) -> Dict[str, Any]:
    d, sent = kw["stream_data"], kw["_sent"]
    if d.get("chunk") != sent["chunk"]:
        return {"display": str(d.get("chunk") or "")}
    return {}


def _hist(req: Any) -> Dict[str, Any]:
    m = getattr(req, "message", None)
    content = m.content if m is not None else ""
    ai = m is not None and m.role == "assistant"
    return {"content_data": {"content": content}, "ai": ai, "_sent": content}


def _hist_answer(req: Any, kw: Dict[str, Any]) -> Dict[str, Any]:
    c = kw["content_data"].get("content")
    if c != kw["_sent"]:
        return {"content": c if isinstance(c, str) else json.dumps(c, default=str)}
    return {}


def _error(req: Any) -> Dict[str, Any]:
    e = getattr(req, "error", "")
    return {"msg": {"message": e}, "_sent": e}


def _error_answer(req: Any, kw: Dict[str, Any]) -> Dict[str, Any]:
    m = kw["msg"].get("message")
    return {"correction": str(m)} if m != kw["_sent"] else {}


def _stream_text(req: Any) -> Dict[str, Any]:
    return {"text": getattr(req, "text", "")}


def _none(req: Any, kw: Dict[str, Any]) -> Dict[str, Any]:
    return {}


def _msgs(ms: Any) -> List[Dict[str, str]]:
    return [{"role": m.role, "content": m.content} for m in ms]


def _chat_before(req: Any) -> Dict[str, Any]:
    return {"call_data": {"model": req.model, "messages": _msgs(req.prompt), "tools": list(req.tools),
                          "prompt_tokens": req.prompt_tokens, "num_ctx": req.num_ctx}}


def _chat_after(req: Any) -> Dict[str, Any]:
    d = {"model": req.model, "response": req.response, "reasoning": req.reasoning,
         "prompt_tokens": req.prompt_tokens, "output_tokens": req.output_tokens}
    return {"call_data": d, "response": req.response, "_sent": req.response}


def _chat_after_answer(req: Any, kw: Dict[str, Any]) -> Dict[str, Any]:
    r = kw["call_data"].get("response")
    return {"response": str(r)} if r != kw["_sent"] else {}


def _util_before(req: Any) -> Dict[str, Any]:
    d = {"model": req.model, "system": req.system, "message": req.message, "callback": None,
         "background": False, "purpose": req.purpose}
    return {"call_data": d, "_sent": dict(d)}


def _util_before_answer(req: Any, kw: Dict[str, Any]) -> Dict[str, Any]:
    d, sent = kw["call_data"], kw["_sent"]
    return {f: str(d.get(f) or "") for f in ("system", "message") if d.get(f) != sent[f]}


def _util_after(req: Any) -> Dict[str, Any]:
    d = {"model": req.model, "system": req.system, "message": req.message, "response": req.response,
         "purpose": req.purpose}
    return {"call_data": d, "response": req.response, "_sent": req.response}


def _exception(req: Any) -> Dict[str, Any]:
    return {"exception_data": {"exception": RuntimeError(req.error), "stage": req.stage}}


def _exception_answer(req: Any, kw: Dict[str, Any]) -> Dict[str, Any]:
    # Agent Zero: an extension that clears exception_data["exception"] handled it.
    return {"handled": True} if not kw["exception_data"].get("exception") else {}


def _chain_end(req: Any) -> Dict[str, Any]:
    return {"data": {"final_response": req.final_response, "stop_reason": req.stop_reason,
                     "iterations": req.iterations}}


def _dict_answer(kw: Dict[str, Any], name: str, fields: Dict[str, str]) -> Dict[str, Any]:
    """What a file changed in the dict kwarg name (data, ctx): the keys in fields
    become the response fields they name; a change to any other key is listed
    under "_lost" (the hook's response has no field for it; the layer logs it)."""
    d, sent = kw[name], kw["_sent"]
    out: Dict[str, Any] = {}
    lost: List[str] = []
    for k in sorted(set(d) | set(sent), key=str):
        if k in sent and d.get(k) == sent[k]:
            continue
        if k in fields and k in d:
            v = d[k]
            out[fields[k]] = v if isinstance(v, str) else json.dumps(v, default=str)
        else:
            lost.append(str(k))
    if lost:
        out["_lost"] = lost
    return out


def _hist_tool_result(req: Any) -> Dict[str, Any]:
    # Agent Zero: data = {"tool_name", "tool_result", **extra}; what is stored
    # is data, so a changed tool_result is the stored text.
    d = {"tool_name": req.tool_call.name, "tool_result": req.text}
    return {"data": d, "_sent": dict(d)}


def _hist_tool_result_answer(req: Any, kw: Dict[str, Any]) -> Dict[str, Any]:
    return _dict_answer(kw, "data", {"tool_result": "text"})


def _output_update(req: Any) -> Dict[str, Any]:
    # Agent Zero: ctx = {"content": the progress so far}; a changed content is
    # what is shown of it (the tool's result is not changed).
    d = {"content": req.output}
    return {"ctx": d, "_sent": dict(d)}


def _output_update_answer(req: Any, kw: Dict[str, Any]) -> Dict[str, Any]:
    return _dict_answer(kw, "ctx", {"content": "display"})


def _read_after(req: Any) -> Dict[str, Any]:
    d = {"content": req.content, "warnings": []}
    return {"data": d, "_sent": {"content": req.content, "warnings": []}}


def _read_after_answer(req: Any, kw: Dict[str, Any]) -> Dict[str, Any]:
    return _dict_answer(kw, "data", {"content": "content"})


def _write_before(req: Any) -> Dict[str, Any]:
    d = {"path": req.path, "content": req.content}
    return {"data": d, "_sent": dict(d)}


def _write_before_answer(req: Any, kw: Dict[str, Any]) -> Dict[str, Any]:
    return _dict_answer(kw, "data", {"content": "content"})


def _lines(text: str) -> int:
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def _write_after(req: Any) -> Optional[Dict[str, Any]]:
    # Agent Zero calls text_editor_write_after only when the write succeeded.
    if req.result.error:
        return None
    d = {"path": req.path, "total_lines": _lines(req.content)}
    return {"data": d, "_sent": dict(d)}


def _patch_before(req: Any) -> Dict[str, Any]:
    # Exocortex's text_editor patches by exact replacement: Agent Zero's
    # "replace" mode.
    d = {"path": req.path, "old_text": req.old_text, "new_text": req.new_text, "edits": [], "mode": "replace"}
    return {"data": d, "_sent": {"path": req.path, "old_text": req.old_text, "new_text": req.new_text,
                                  "edits": [], "mode": "replace"}}


def _patch_before_answer(req: Any, kw: Dict[str, Any]) -> Dict[str, Any]:
    return _dict_answer(kw, "data", {"old_text": "old_text", "new_text": "new_text"})


def _patch_after(req: Any) -> Optional[Dict[str, Any]]:
    # Called only when the patch succeeded, as in Agent Zero. The request does
    # not carry the file's length: total_lines is None.
    if req.result.error:
        return None
    d = {"path": req.path, "total_lines": None, "replacement_count": 1, "mode": "replace"}
    return {"data": d, "_sent": dict(d)}


def _after_answer(req: Any, kw: Dict[str, Any]) -> Dict[str, Any]:
    # Nothing a file changes after the edit has a field: any change is lost.
    return _dict_answer(kw, "data", {})


def _no_kwargs(req: Any) -> Dict[str, Any]:
    # Agent Zero passes nothing besides loop_data (reasoning_stream_end) or
    # nothing at all (embedding_model_changed).
    return {}


# Hooks whose response can refuse what is about to happen: a file that raises
# there refuses it, with the exception as the reason, as an exception out of
# Agent Zero's extension stops its text_editor call and the model is told.
REFUSES = {"text_editor_write_before", "text_editor_patch_before"}

KWARGS = {
    "chat_model_call_before": (_chat_before, _none),
    "chat_model_call_after": (_chat_after, _chat_after_answer),
    "util_model_call_before": (_util_before, _util_before_answer),
    "util_model_call_after": (_util_after, _chat_after_answer),
    "reasoning_stream_chunk": (_chunk, _chunk_answer),
    "reasoning_stream": (_stream_text, _none),
    "response_stream": (_stream_text, _none),
    "message_loop_exception": (_exception, _exception_answer),
    "process_chain_end": (_chain_end, _none),
    "tool_execute_before": (_tool_before, _tool_before_answer),
    "tool_execute_after": (_tool_after, _tool_after_answer),
    "response_stream_chunk": (_chunk, _chunk_answer),
    "hist_add_before": (_hist, _hist_answer),
    "error_format": (_error, _error_answer),
    "hist_add_tool_result": (_hist_tool_result, _hist_tool_result_answer),
    "tool_output_update": (_output_update, _output_update_answer),
    "text_editor_read_after": (_read_after, _read_after_answer),
    "text_editor_write_before": (_write_before, _write_before_answer),
    "text_editor_write_after": (_write_after, _after_answer),
    "text_editor_patch_before": (_patch_before, _patch_before_answer),
    "text_editor_patch_after": (_patch_after, _after_answer),
    "reasoning_stream_end": (_no_kwargs, _none),
    "embedding_model_changed": (_no_kwargs, _none),
}


class Adapter:
    """One Agent Zero file served as one Exocortex extension."""

    def __init__(self, path: str, hook: str, order: int, name: str, plugin: str,
                 shared: Optional[Dict[str, Key]] = None, observed: Optional[Observed] = None,
                 rel: str = "", local: Optional[Dict[str, Any]] = None, held: Optional[Dict[str, Any]] = None) -> None:
        self.path, self.hook, self.order, self.name = path, hook, order, name
        with open(path, encoding="utf-8") as f:
            source = f.read()
        self.reads, self.writes = static_keys(source)
        self.awaits = awaits_anything(source)
        shared = {} if shared is None else shared
        self.keys = {k: shared.setdefault(k, key_for(k, plugin)) for k in sorted(self.reads | self.writes)}
        spec = importlib.util.spec_from_file_location(f"a0_{hook}_{order}_{name}", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        classes = [c for c in vars(mod).values()
                   if isinstance(c, type) and issubclass(c, Extension) and c is not Extension
                   and c.__module__ == mod.__name__]
        if not classes:
            raise ValueError(f"{path}: no subclass of Extension: an Agent Zero extension file defines one")
        self.agent = Agent(self.keys, name, rel or os.path.basename(path), observed, local, held)
        self.uses_files = bool(_USES_FILES.search(source))
        self.uses_utility = bool(_USES_UTILITY.search(source))
        self.uses_memory = bool(_USES_MEMORY.search(source))
        self.ext = classes[0](agent=self.agent)
        self.info = lookup(hook)
        self.kwargs = KWARGS.get(hook)
        self.ext_name = f"a0_{name}"
        setattr(self, hook, self._handle)

    def spec(self) -> Spec:
        keys = self.keys
        return Spec(name=self.ext_name, order=self.order,
                    description=f"Agent Zero extension {os.path.basename(self.path)}, ported.",
                    reads=[keys[k] for k in sorted(self.reads | self.writes)],
                    writes=[keys[k] for k in sorted(self.writes)],
                    injects_prompt=self.info.prompt, reads_history=True, reads_prompt=True,
                    timeout=UTILITY_TIMEOUT if self.uses_utility else 0)

    def _handle(self, call: Any, req: Any) -> Any:
        coro = self._serve(call, req)
        if self.awaits:
            # The SDK runs it on the plugin's one long-lived event loop
            # (exocortex.aio), within the call's deadline: a task the file starts
            # there lives on after the call, for a later call to await.
            return coro
        # A module that awaits nothing finishes at its first step: driven here, on
        # the calling thread (an event loop's round trip costs about as much as the
        # rest of the call).
        try:
            return aio.drive(coro)
        except RuntimeError as e:
            if "expected to await nothing suspended" not in str(e):
                raise
            self.awaits = True
            raise RuntimeError(f"a0compat: {self.name}, whose module awaits nothing, suspended: it is served "
                               "by the event loop from its next call on") from None

    async def _serve(self, call: Any, req: Any) -> Any:
        ld = _loop_data(req)
        _host.observe(req)
        system_before = len(ld.system)
        self.agent._call = call
        self.agent._last_call = call
        token = _runtime.current_agent.set(self.agent)
        self.agent.history = _History(ld.history_output)
        kwargs: Dict[str, Any] = {}
        added: List[str] = []
        if self.hook == "system_prompt":
            # Agent Zero hands system_prompt extensions the list of system prompt
            # parts to append to.
            kwargs["system_prompt"] = added
        if self.kwargs is not None:
            made = self.kwargs[0](req)
            if made is None:  # Agent Zero does not call the hook in this case
                self.agent._call = None
                _runtime.current_agent.reset(token)
                return None
            kwargs = made
        passed = {k: v for k, v in kwargs.items() if not k.startswith("_")}
        try:
            out = self.ext.execute(loop_data=ld, **passed)
            if asyncio.iscoroutine(out):  # a plain `def execute` (Agent Zero accepts one) has run
                await out
        except Exception as e:  # noqa: BLE001 - refused, see REFUSES
            if self.hook not in REFUSES:
                raise
            call.logger.warning(f"a0compat: {self.name} refused the {self.hook} call: {type(e).__name__}: {e}")
            return self.info.response(refuse=f"{type(e).__name__}: {e}")
        finally:
            self.agent._call = None
            _runtime.current_agent.reset(token)
        if self.kwargs is not None:
            fields = self.kwargs[1](req, kwargs)
            for k in fields.pop("_lost", []):
                call.logger.warning(
                    f"a0compat: {self.name} changed {k!r} at {self.hook}, which Exocortex's {self.hook} "
                    "response has no field for: the change is lost (the porting report names the line)")
            return self.info.response(**fields) if fields else None
        if not self.info.prompt:
            return None
        blocks = []
        for extras in (ld.extras_persistent, ld.extras_temporary):
            for title, value in extras.items():
                content = value if isinstance(value, str) else json.dumps(value, default=str)
                blocks.append(context_pb2.PromptBlock(title=str(title), content=content))
        for s in ld.system[system_before:] + added:
            blocks.append(context_pb2.PromptBlock(title=self.name, content=str(s)))
        if not blocks:
            return None
        return self.info.response(prompt_blocks=blocks)


def load_tree(root: str, plugin: str, failed: Optional[List[Tuple[str, str]]] = None) -> List[Adapter]:
    """Return an Adapter for every extensions/python/<hook>/_NN_name.py under root
    whose hook Exocortex has; the others are left out (the port report names them).
    A file that cannot be loaded (a syntax error, an import Exocortex has no
    counterpart for) is left out too and appended to failed as (path, reason): the
    rest are still served."""
    base = os.path.join(root, "extensions", "python")
    out: List[Adapter] = []
    shared: Dict[str, Key] = {}
    plugin_dir = os.path.dirname(os.path.abspath(root))
    _runtime.configure(plugin_dir, plugin)
    observed = Observed(os.path.join(plugin_dir, OBSERVED))
    local: Dict[str, Any] = {}
    held: Dict[str, Any] = {}
    names: Set[str] = set()
    if root not in sys.path:
        sys.path.insert(0, root)
    if not any(isinstance(f, _TreeFinder) for f in sys.meta_path):
        sys.meta_path.append(_TreeFinder(base))
    for hook in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        target = HOOK_MAP.get(hook)
        if target is None:
            continue
        files = [(fn, _FILE_RE.match(fn)) for fn in sorted(os.listdir(os.path.join(base, hook)))]
        files = [(fn, m) for fn, m in files if m is not None]
        # The numeric prefix is the order. Two files sharing a prefix (seam 4,
        # reported by the port) run in name order, as in Agent Zero: the later
        # one takes the next order no other file at the hook has.
        used = {int(m.group(1)) for _, m in files}
        taken: Set[int] = set()
        for fn, m in files:
            order = int(m.group(1))
            if order in taken:
                while order in taken or order in used:
                    order += 1
            taken.add(order)
            path = os.path.join(base, hook, fn)
            try:
                rel = os.path.relpath(path, plugin_dir).replace(os.sep, "/")
                a = Adapter(path, target, order, m.group(2), plugin, shared, observed, rel, local, held)
            except Exception as e:  # noqa: BLE001 - one bad file must not sink the rest
                if failed is not None:
                    failed.append((path, f"{type(e).__name__}: {e}"))
                print(f"a0compat: {path} left out: {type(e).__name__}: {e}", file=sys.stderr)
                continue
            a.agent.prompts_dir = os.path.join(plugin_dir, "prompts")
            if a.ext_name in names:
                a.ext_name = f"{a.ext_name}_{target}"
            names.add(a.ext_name)
            out.append(a)
    return out


def files_specs(adapters: List[Adapter], plugin_dir: str, name: str) -> List[manifest_pb2.FileSpec]:
    """The data files the helpers.files stand-in may touch, declared for every
    file that uses it: the plugin's directory and the project's."""
    ns = key_name("", name).rstrip("_")
    out = []
    for a in adapters:
        if a.uses_files:
            for suffix, where, doc in (("files", plugin_dir, "the ported plugin's directory (Agent Zero's base directory)"),
                                       ("project", "$PROJECT", "the project")):
                out.append(manifest_pb2.FileSpec(id=f"{ns}_{suffix}", path=where, access=manifest_pb2.ACCESS_READ_WRITE,
                                                 user=a.ext_name, doc=f"Agent Zero helpers.files: {doc}."))
    return out


def plugin(root: str, name: str, version: str = "ported") -> Plugin:
    """The Exocortex plugin serving the Agent Zero tree at root."""
    exts = load_tree(root, name)
    return Plugin(name=name, version=version, extensions=exts,
                  files=files_specs(exts, os.path.dirname(os.path.abspath(root)), name),
                  uses_utility_model=any(a.uses_utility for a in exts),
                  **_memory_use(exts))


def _memory_use(exts) -> dict:
    """A tree whose files use Agent Zero's Memory declares uses_memory, and every
    area: the stand-in (exocortex.a0.memory) saves in the area a document's
    metadata names and deletes by query, wherever the records are."""
    if not any(a.uses_memory for a in exts):
        return {}
    return {"uses_memory": True, "memory_write_areas": ("*",)}


# A file that calls the utility model: the plugin declares uses_utility_model,
# and the file's deadline covers the host's bound on one call (60 s by default)
# and the file's own work, instead of the hooks' default of 10 s.
_USES_UTILITY = re.compile(r"\.call_utility_model\s*\(")

# A file that uses Agent Zero's memory (plugins._memory.helpers.memory, or
# python.helpers.memory in older trees): the plugin declares uses_memory.
_USES_MEMORY = re.compile(r"helpers\.memory\b|helpers\s+import\s+(?:[\w\s,]*,\s*)?memory\b")
UTILITY_TIMEOUT = 90.0


_USES_FILES = re.compile(r"^\s*(?:from\s+helpers\s+import\s+.*\bfiles\b|from\s+helpers\.files\s+import|import\s+helpers\.files)", re.M)


class _TreeFinder(importlib.abc.MetaPathFinder):
    """Serves an import of another extension file of the tree, Agent Zero's
    plugin layout (plugins.<plugin>.extensions.python.<hook>.<file>), from its
    ported copy under base (<hook>/<file>.py), and the packages above it that
    are not on disk as empty ones. Last on sys.meta_path: the shims' packages
    (plugins/_memory/...) are found first."""

    def __init__(self, base: str) -> None:
        self.base = base

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        parts = fullname.split(".")
        if parts[0] != "plugins" or len(parts) < 2 or len(parts) > 6:
            return None
        if len(parts) == 6:
            if parts[2:4] != ["extensions", "python"]:
                return None
            file = os.path.join(self.base, parts[4], parts[5] + ".py")
            return importlib.util.spec_from_file_location(fullname, file) if os.path.isfile(file) else None
        if parts[2:4] != ["extensions", "python"][: len(parts) - 2]:
            return None
        if len(parts) == 5 and not os.path.isdir(os.path.join(self.base, parts[4])):
            return None
        spec = importlib.machinery.ModuleSpec(fullname, None, is_package=True)
        spec.submodule_search_locations = []
        return spec
