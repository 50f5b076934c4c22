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
import types
from typing import Any, Dict, List, Optional, Set, Tuple

from google.protobuf import json_format, struct_pb2

from exocortex import aio
from exocortex.a0 import _host, _runtime, _unloaded, prompts, utility
from exocortex.a0._agent_calls import NoCounterpartCalls
from exocortex.a0.agent_types import AgentContextType, UserMessage  # noqa: F401 - the agent shim's names
from exocortex.a0._kwargs import BLOCKS, KWARGS, POINTS, REFUSES, Response  # noqa: F401 - Response: the tool response files get
from exocortex.hooks import HOOKS, lookup
from exocortex.keys import Key
from exocortex.spec import Plugin, Spec
from exocortex.v1 import context_pb2, hooks_pb2, manifest_pb2

# Agent Zero hook directory names with an Exocortex hook of the same meaning: every
# hook of the protocol is named as Agent Zero names it, so a directory maps onto the
# hook of its own name (and a hook added to the protocol is served at once).
HOOK_MAP: Dict[str, str] = {h.name: h.name for h in HOOKS}

# Where a ported plugin records the keys its files use at run time (Observed),
# relative to the plugin's directory.
OBSERVED = os.path.join(".a0compat", "observed.json")

_FILE_RE = re.compile(r"^_(\d+)_([A-Za-z0-9_]+)\.py$")

# The port's list of the files to serve (scaffold/a0port: points.json), under a0/.
POINTS_FILE = "points.json"


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
    as Agent Zero's LogItem does. The log keeps its items (logs, for the files
    that read what was logged) and the progress line (progress,
    set_progress, set_initial_progress), which goes to the host log too."""

    def __init__(self, agent: "Agent", root: Optional["_Log"] = None) -> None:
        self._agent = agent
        self._root = root
        self.kvps: Dict[str, Any] = {}
        self.type, self.heading, self.content = "info", "", ""
        self.id: Optional[str] = None
        if root is None:
            self._lock = threading.RLock()
            self.logs: List["_Log"] = []
            self.progress, self.progress_no, self.progress_active = "", 0, False
            self.set_initial_progress()

    @property
    def no(self) -> int:
        return self._root.logs.index(self) if self._root is not None and self in self._root.logs else 0

    def log(self, type: str = "info", heading: str = "", content: str = "", **kwargs: Any) -> "_Log":
        root = self._root or self
        item = _Log(self._agent, root)
        item.id = kwargs.pop("id", None)
        item._write(type, heading, content, kwargs)
        with root._lock:
            root.logs.append(item)
        return item

    def set_progress(self, progress: str, no: int = 0, active: bool = True) -> None:
        root = self._root or self
        root.progress, root.progress_no, root.progress_active = str(progress), no, active
        call = self._agent._call
        if call is not None and active:
            call.logger.info(f"[progress] {progress}")

    def set_initial_progress(self) -> None:
        self.set_progress("Waiting for input", 0, False)

    def output(self, start: Optional[int] = None, end: Optional[int] = None) -> List[Dict[str, Any]]:
        root = self._root or self
        return [{"no": i, "type": it.type, "heading": it.heading, "content": it.content, "kvps": it.kvps}
                for i, it in enumerate(root.logs[start:end])]

    def _write(self, type: str, heading: str, content: str, kwargs: Dict[str, Any]) -> None:
        self.type = type or self.type
        self.heading = heading or self.heading
        self.content = content or self.content
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

    def is_over_limit(self) -> bool:
        """Agent Zero: whether the history needs compressing. The core compresses
        Exocortex's history itself, to the context window, before each prompt:
        never over the limit here."""
        return False

    async def compress(self) -> bool:
        """Agent Zero: compress the history once; True when something was
        compressed. The core does it (history compression, util_model_call
        hooks): nothing to do here."""
        return False

    def remove_all_embeds(self) -> int:
        """Agent Zero: drop embedded images; the count removed. Exocortex's
        history holds text only."""
        return 0


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
        self.data: Dict[str, Any] = {}
        # Every context of a ported plugin is the user's session.
        self.type = AgentContextType.USER

    def is_running(self) -> bool:
        """Whether the agent is in a turn: a file runs inside one, or in a task
        it started, which outlives the call only when the turn goes on."""
        return self.agent0._call is not None

    def get_data(self, key: str, recursive: bool = True) -> Any:
        return self.data.get(key)

    def set_data(self, key: str, value: Any, recursive: bool = True) -> None:
        self.data[key] = value


class AgentConfig:
    """Agent Zero's agent.config, as far as extensions read it: the running
    agent profile (the host's --profile; "" for the default), and the
    profile's settings (empty: settings are the operator's config.yaml). An
    extension may replace agent.config, as Agent Zero's profile loader does."""

    def __init__(self, profile: str = "", **kwargs: Any) -> None:
        self.profile = profile
        self.mcp_servers = ""
        self.knowledge_subdirs: List[str] = ["default", "custom"]
        self.additional: Dict[str, Any] = {}
        for k, v in kwargs.items():
            setattr(self, k, v)


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


class Agent(NoCounterpartCalls):
    """The part of Agent Zero's Agent an extension sees: get_data/set_data on typed
    state, context.log on the host log, and attributes (number, agent_name); the
    calls with no counterpart raise naming themselves (exocortex.a0._agent_calls)."""

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
        # The opening messages a file adds at agent_init (hist_add_ai_response
        # there): the response's opening_messages, None at every other hook.
        self._opening: Optional[List[Any]] = None
        self.number = 0
        self.agent_name = "A0"
        self.context = _Context(self)
        self.data = self._local
        self.history = _History()
        self.config = AgentConfig()
        # Where read_prompt finds prompt files: the ported plugin's prompts/
        # (the port copies the tree's prompts/*.md there); set by load_tree.
        self.prompts_dir: Optional[str] = None

    def read_prompt(self, file: str, **kwargs: Any) -> str:
        """Agent Zero's read_prompt: the prompt file from the ported plugin's
        prompts/ directory, read as Agent Zero reads it (exocortex.a0.prompts:
        its .py variables file, {{if}} blocks, {{name}} placeholders,
        {{ include "file" }}); a prompt that is one fenced JSON block
        (fw.initial_message.md) loses its fences, as Agent Zero's does."""
        where = self.prompts_dir or "prompts/"
        try:
            return prompts.unfence_json(prompts.read(os.path.basename(file), [where], _agent=self, **kwargs))
        except FileNotFoundError as e:
            raise FileNotFoundError(f"a0compat: {self._owner} reads the prompt file {file!r}: {e}") from e

    def concat_messages(self, messages: Any = None, **kwargs: Any) -> str:
        """Agent Zero's concat_messages: the history as "role: content" lines."""
        if isinstance(messages, _History) or messages is None:
            return (messages or self.history).output_text()
        return "\n".join(f"{m.get('role', '')}: {m.get('content', '')}" if isinstance(m, dict) else str(m)
                         for m in messages)

    def parse_prompt(self, file: str, **kwargs: Any) -> str:
        """Agent Zero's parse_prompt, as read_prompt."""
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


def _own_sources(mod: Any) -> List[str]:
    """The sources of the modules of the tree's own that mod imports (a
    plugin's helper, as the module or a name from it): a file that awaits
    nothing itself but calls a helper that starts a task needs the event loop
    too, and one whose helper calls the utility model declares it. The layer's
    own modules (under the plugin's exocortex/) and the shims are not the
    tree's."""
    base = _runtime.get().plugin_dir
    layer = os.path.join(base, "exocortex") + os.sep
    seen: Set[str] = set()
    out: List[str] = []
    for v in vars(mod).values():
        m = v if isinstance(v, types.ModuleType) else sys.modules.get(getattr(v, "__module__", None) or "")
        f = getattr(m, "__file__", None)
        if not f or m is mod:
            continue
        f = os.path.abspath(f)
        if f in seen or not f.startswith(base + os.sep) or f.startswith(layer):
            continue
        seen.add(f)
        try:
            with open(f, encoding="utf-8") as fh:
                src = fh.read()
            if "Shim:" in src[:200]:
                continue
            ast.parse(src)
            out.append(src)
        except (OSError, SyntaxError, ValueError):
            continue
    return out


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


class Adapter:
    """One Agent Zero file served as one Exocortex extension."""

    def __init__(self, path: str, hook: str, order: int, name: str, plugin: str,
                 shared: Optional[Dict[str, Key]] = None, observed: Optional[Observed] = None,
                 rel: str = "", local: Optional[Dict[str, Any]] = None, held: Optional[Dict[str, Any]] = None,
                 kind: str = "", ext_name: str = "", external: Optional[List[str]] = None,
                 params: Optional[Dict[str, Any]] = None) -> None:
        self.path, self.hook, self.order, self.name = path, hook, order, name
        if kind and kind not in POINTS:
            raise ValueError(f"{path}: unknown _functions point kind {kind!r}: port the tree again")
        self.point = POINTS.get(kind)
        # The loop data's params, shared by the tree's files (see _serve).
        self.params: Dict[str, Any] = {} if params is None else params
        with open(path, encoding="utf-8") as f:
            source = f.read()
        self.reads, self.writes = static_keys(source)
        self.awaits = awaits_anything(source)
        shared = {} if shared is None else shared
        # Keys the port found read and written by no file of the tree that runs
        # (points.json "external"): kept in the process, not shared state.
        self.reads -= set(external or ()) - self.writes
        self.keys = {k: shared.setdefault(k, key_for(k, plugin)) for k in sorted(self.reads | self.writes)}
        spec = importlib.util.spec_from_file_location(f"a0_{hook}_{order}_{name}", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        own = _own_sources(mod)
        self.awaits = self.awaits or any(awaits_anything(s) for s in own)
        classes = [c for c in vars(mod).values()
                   if isinstance(c, type) and issubclass(c, Extension) and c is not Extension
                   and c.__module__ == mod.__name__]
        if not classes:
            raise ValueError(f"{path}: no subclass of Extension: an Agent Zero extension file defines one")
        self.agent = Agent(self.keys, name, rel or os.path.basename(path), observed, local, held)
        self.uses_files = bool(_USES_FILES.search(source))
        # A helper of the tree's own the file imports may be what calls the
        # utility model (the infection check's checker).
        self.uses_utility = any(_USES_UTILITY.search(s) for s in [source] + own)
        self.uses_memory = bool(_USES_MEMORY.search(source))
        self.ext = classes[0](agent=self.agent)
        # A file at a gate fails closed (its exception, crash or missed deadline
        # stops the action) unless its class says `fail_open = True`: one that
        # only watches. Elsewhere a failure stops nothing, and the host refuses
        # the declaration, so it is not passed on.
        self.fail_open = bool(getattr(classes[0], "fail_open", False)) and _unloaded.gates(hook)
        self.info = lookup(hook)
        self.kwargs = KWARGS.get(hook)
        self.ext_name = ext_name or f"a0_{name}"
        setattr(self, hook, self._handle)

    def spec(self) -> Spec:
        keys = self.keys
        return Spec(name=self.ext_name, order=self.order,
                    description=f"Agent Zero extension {os.path.basename(self.path)}, ported.",
                    reads=[keys[k] for k in sorted(self.reads | self.writes)],
                    writes=[keys[k] for k in sorted(self.writes)],
                    injects_prompt=self.info.prompt, reads_history=True, reads_prompt=True,
                    timeout=UTILITY_TIMEOUT if self.uses_utility else 0,
                    fail_open=self.fail_open)

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
        # Agent Zero has one LoopData per monologue: what a file keeps in its
        # params is seen by the files after it, params_temporary for the
        # iteration (the context's iteration), params_persistent for the session.
        it = (req.call.context.request_id, req.call.context.iteration)
        if self.params.get("iteration") != it:
            self.params["iteration"] = it
            self.params["temporary"] = {}
        ld.params_temporary = self.params.setdefault("temporary", {})
        ld.params_persistent = self.params.setdefault("persistent", {})
        _host.observe(req)
        if isinstance(self.agent.config, AgentConfig):
            self.agent.config.profile = req.call.context.agent_profile
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
        answer = self.kwargs[1] if self.kwargs is not None else None
        made = None
        if self.point is not None:
            made, answer = self.point[0](self.agent, req), self.point[1]
            if made is None:  # Agent Zero does not call the function for this message
                self.agent._call = None
                _runtime.current_agent.reset(token)
                return None
            kwargs = made
        elif self.kwargs is not None:
            made = self.kwargs[0](req)
            if made is None:  # Agent Zero does not call the hook in this case
                self.agent._call = None
                _runtime.current_agent.reset(token)
                return None
            kwargs = made
        passed = {k: v for k, v in kwargs.items() if not k.startswith("_")}
        self.agent._opening = [] if self.hook == "agent_init" else None
        try:
            out = self.ext.execute(loop_data=ld, **passed)
            if asyncio.iscoroutine(out):  # a plain `def execute` (Agent Zero accepts one) has run
                await out
        except Exception as e:  # noqa: BLE001 - refused, see REFUSES and BLOCKS
            if self.fail_open:
                # A watcher's exception is its failure, not a decision: the host
                # logs it and lets the action through.
                raise
            if self.hook in BLOCKS:
                call.logger.warning(f"a0compat: {self.name} stopped the tool call: {type(e).__name__}: {e}")
                return self.info.response(block=hooks_pb2.ToolBlock(reason=f"{self.name} raised {type(e).__name__}: {e}"))
            if self.hook not in REFUSES:
                raise
            call.logger.warning(f"a0compat: {self.name} refused the {self.hook} call: {type(e).__name__}: {e}")
            return self.info.response(refuse=f"{type(e).__name__}: {e}")
        finally:
            self.agent._call = None
            _runtime.current_agent.reset(token)
        if answer is not None:
            fields = answer(req, kwargs)
            for k in fields.pop("_lost", []):
                call.logger.warning(
                    f"a0compat: {self.name} changed {k!r} at {self.hook}, which Exocortex's {self.hook} "
                    "response has no field for: the change is lost (the porting report names the line)")
            return self.info.response(**fields) if fields else None
        opening, self.agent._opening = self.agent._opening, None
        if opening:
            return self.info.response(opening_messages=opening)
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
    params: Dict[str, Any] = {}
    names: Set[str] = set()
    if root not in sys.path:
        sys.path.insert(0, root)
    if not any(isinstance(f, _TreeFinder) for f in sys.meta_path):
        sys.meta_path.append(_TreeFinder(base))
    def load(path: str, hook: str, order: int, name: str, **kw: Any) -> Optional[Adapter]:
        # One bad file must not sink the rest: it is left out, with why.
        try:
            rel = os.path.relpath(path, plugin_dir).replace(os.sep, "/")
            a = Adapter(path, hook, order, name, plugin, shared, observed, rel, local, held, params=params, **kw)
        except Exception as ex:  # noqa: BLE001
            why = f"{type(ex).__name__}: {ex}"
            if failed is not None:
                failed.append((path, why))
            if hook in HOOK_MAP and _unloaded.gates(hook):
                # A guard that does not load fails closed (exocortex.a0._unloaded).
                print(f"a0compat: {path} did not load, served as a guard that stops every action: {why}", file=sys.stderr)
                return _unloaded.UnloadedGuard(path, hook, order, kw.get("ext_name") or f"a0_{name}", why)
            print(f"a0compat: {path} left out: {why}", file=sys.stderr)
            return None
        a.agent.prompts_dir = os.path.join(plugin_dir, "prompts")
        return a

    points = os.path.join(root, POINTS_FILE)
    if os.path.isfile(points):
        # The port decided each file's hook, order and name (points.json): any
        # *.py of a hook folder, _functions points, overrides, name order.
        with open(points, encoding="utf-8") as f:
            entries = json.load(f)
        for e in entries:
            path = os.path.join(root, e["file"])
            stem = os.path.splitext(os.path.basename(path))[0]
            a = load(path, e["hook"], int(e["order"]), stem,
                     kind=e.get("kind", ""), ext_name=e["name"], external=e.get("external"))
            if a is not None:
                out.append(a)
        return out
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
            a = load(os.path.join(base, hook, fn), target, order, m.group(2))
            if a is None:
                continue
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
_USES_UTILITY = re.compile(r"\.call_utility_model\s*\(|\.get_utility_model\s*\(")

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
        if parts[0] == "extensions":  # the base tree's own extension files
            parts = ["plugins", "_base"] + parts
        if parts[0] == "usr":  # v1.7 installs plugins under usr/plugins/
            parts = parts[1:]
            if len(parts) < 2 and parts[:1] in ([], ["plugins"]):
                # usr.plugins is the ported plugin's plugins/ (where the port
                # copies a plugin's own modules and writes the shims).
                spec = importlib.machinery.ModuleSpec(fullname, None, is_package=True)
                plugin_dir = os.path.dirname(os.path.dirname(os.path.dirname(self.base)))
                spec.submodule_search_locations = [os.path.join(plugin_dir, "plugins")] if parts else []
                return spec
        if not parts or parts[0] != "plugins" or len(parts) < 2:
            return None
        if parts[2:4] != ["extensions", "python"][: len(parts) - 2]:
            return None
        if len(parts) >= 5:
            # A hook folder's file, or a _functions point's (any depth).
            where = os.path.join(self.base, *parts[4:])
            if os.path.isfile(where + ".py"):
                return importlib.util.spec_from_file_location(fullname, where + ".py")
            if not os.path.isdir(where):
                return None
        spec = importlib.machinery.ModuleSpec(fullname, None, is_package=True)
        spec.submodule_search_locations = []
        return spec
