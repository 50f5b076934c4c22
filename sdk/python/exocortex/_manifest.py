"""Validation of a Plugin and the manifest derived from it (the rules of Go's
sdk.NewServer, with the same refusals)."""

from __future__ import annotations

import datetime
import json
import math
import re
from dataclasses import dataclass
from typing import Any, Dict, FrozenSet, List, Optional, Sequence, Tuple

from exocortex import signals
from exocortex._hooks_gen import READS_HISTORY_HOOKS, READS_PROMPT_HOOKS, TOOL_HOOKS
from exocortex.hooks import HOOKS, lookup
from exocortex.keys import Key, builtin_keys
from exocortex.spec import InvalidPlugin, Plugin, Spec, Tool
from exocortex.v1 import manifest_pb2

_INT32_MIN, _INT32_MAX = -(2 ** 31), 2 ** 31 - 1
_UINT32_MAX = 2 ** 32 - 1
_SCOPES = frozenset(v.number for v in manifest_pb2.Scope.DESCRIPTOR.values) - {manifest_pb2.SCOPE_UNSPECIFIED}
# The hook sets (READS_HISTORY_HOOKS, READS_PROMPT_HOOKS, TOOL_HOOKS) are generated
# from the protocol, as the Go SDK's are (make generate).


@dataclass
class ExtEntry:
    """An extension as the server dispatches to it."""

    ext: Any
    spec: Spec
    hooks: FrozenSet[int]
    reads: FrozenSet[str]
    writes: FrozenSet[str]


@dataclass
class Built:
    """A validated plugin: the manifest and the dispatch tables."""

    manifest: manifest_pb2.ManifestResponse
    exts: Dict[str, ExtEntry]
    tools: Dict[str, Tool]


def _has_space(s: str) -> bool:
    return any(c in s for c in " \t\r\n")


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def timeout_ms(timeout: Any) -> Optional[int]:
    """A Spec.timeout in whole milliseconds, rounded up; None when it is not a
    number of seconds or a timedelta."""
    if isinstance(timeout, datetime.timedelta):
        us = (timeout.days * 86400 + timeout.seconds) * 1_000_000 + timeout.microseconds
    elif isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and math.isfinite(timeout):
        us = round(timeout * 1_000_000)
    else:
        return None
    if us <= 0:
        return 0 if us == 0 else -1
    return (us + 999) // 1000


def _spec_of(ext: Any) -> Tuple[Optional[Spec], Optional[str]]:
    spec_fn = getattr(ext, "spec", None)
    if not callable(spec_fn):
        return None, "has no spec() method returning an exocortex.Spec"
    try:
        spec = spec_fn()
    except Exception as e:  # e.g. Key(Message) of a message that is no key
        return None, f"spec() raised {type(e).__name__}: {e}"
    if not isinstance(spec, Spec):
        return None, f"spec() returned {type(spec).__name__}, not an exocortex.Spec"
    return spec, None


def _check_key(k: Any, builtins: Dict[str, manifest_pb2.StateKeySpec]) -> Optional[str]:
    if not isinstance(k, Key):
        return f"{k!r} is not a key; build keys with exocortex.Key(MessageClass) or Key(MessageClass, name=..., scope=...)"
    if not k.name:
        return f"a key of type {k.type_name} has an empty name"
    if k.builtin:
        return None
    if k.name in builtins:
        b = builtins[k.name]
        return (f'key "{k.name}" is built in (type {b.type}); use exocortex.Key({b.type.rsplit(".", 1)[-1]}) '
                "without a name instead of declaring it again")
    if k.scope not in _SCOPES:
        return (f'key "{k.name}" has no valid scope ({k.scope}); pass scope=SCOPE_ITERATION, SCOPE_MONOLOGUE, '
                "SCOPE_SESSION or SCOPE_PERSISTENT")
    return None


def _sorted_unique(items: Sequence[str]) -> List[str]:
    return sorted(set(items))


# The form of a memory area name (memory.ValidArea's).
_AREA_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")


def build(p: Plugin) -> Built:
    """Validate p and derive its manifest; InvalidPlugin lists every problem."""
    errs: List[str] = []
    bad = errs.append
    pname = p.name if isinstance(p.name, str) else ""

    if not pname:
        bad("plugin has no name")
    if not p.extensions and not p.tools:
        bad(f'plugin "{pname}" serves no extension and no tool')
    manifest = manifest_pb2.ManifestResponse(plugin=pname, version=p.version or "", serves_batches=True,
                                         serves_dispatch=True,
                                         uses_utility_model=bool(p.uses_utility_model),
                                         uses_memory=bool(p.uses_memory),
                                         memory_write_areas=list(p.memory_write_areas))
    if p.memory_write_areas and not p.uses_memory:
        bad(f'plugin "{pname}" declares memory_write_areas {list(p.memory_write_areas)} without uses_memory: '
            'set uses_memory=True too')
    for a in p.memory_write_areas:
        if a != "*" and not _AREA_RE.match(a or ""):
            bad(f'plugin "{pname}": memory write area {a!r} is not an area name '
                "(lower-case letters, digits, '-' and '_', at most 64) nor '*'")
    exts: Dict[str, ExtEntry] = {}
    tools: Dict[str, Tool] = {}
    builtins = {k.name: k for k in builtin_keys()}
    plugin_keys: Dict[str, Key] = {}
    owners: Dict[str, List[str]] = {}

    for i, ext in enumerate(p.extensions):
        if ext is None:
            bad(f'plugin "{pname}": extensions[{i}] is None')
            continue
        cls = type(ext).__name__
        spec, err = _spec_of(ext)
        if err:
            bad(f'plugin "{pname}": extensions[{i}] ({cls}): {err}')
            continue
        name = spec.name
        if not isinstance(name, str) or not name or _has_space(name):
            bad(f'plugin "{pname}": extension {cls} has an empty name or one with spaces ({name!r})')
            continue
        if name in exts:
            bad(f'plugin "{pname}": two extensions are named "{name}"')
            continue
        hooks = frozenset(h.hook for h in HOOKS if callable(getattr(ext, h.name, None)))
        if not hooks:
            bad(f'extension "{name}" ({cls}) implements no hook method; define one named after a hook, '
                f"e.g. def message_loop_end(self, call, req) (hooks: {', '.join(h.name for h in HOOKS)})")
            continue
        prompt_hook = any(lookup(h).prompt for h in hooks)
        if spec.injects_prompt and not prompt_hook:
            bad(f'extension "{name}" declares injects_prompt but implements no prompt-assembly hook '
                "(message_loop_prompts_before, system_prompt or message_loop_prompts_after); "
                "text added elsewhere cannot reach the model")
        hook_order: Dict[int, int] = {}
        for h, o in dict(spec.hook_order or {}).items():
            info = lookup(h)
            if info is None or isinstance(h, bool):
                bad(f'extension "{name}": hook_order names {h!r}, which is not a hook')
            elif info.hook not in hooks:
                bad(f'extension "{name}": hook_order names {info.name}, a hook it does not implement')
            else:
                hook_order[info.hook] = o
        for sig in spec.consumes_signals:
            if not signals.known(sig):
                bad(f'extension "{name}" consumes unknown signal "{sig}"; use a constant of exocortex.signals '
                    f"({', '.join(sorted(signals.ALL))})")
        for_tools = _check_for_tools(name, spec.for_tools, hooks, bad)
        ms = timeout_ms(spec.timeout)
        if ms is None:
            bad(f'extension "{name}": timeout {spec.timeout!r} is not a number of seconds or a timedelta')
        elif ms < 0:
            bad(f'extension "{name}": negative timeout {spec.timeout!r}')
        elif ms > _UINT32_MAX:
            bad(f'extension "{name}": timeout {spec.timeout!r} is longer than the protocol carries')

        # Keys: valid, consistent across the plugin, resets within writes.
        reads, writes = set(), set()
        for field, keys, into in (("reads", spec.reads, reads), ("writes", spec.writes, writes),
                                  ("resets", spec.resets, None)):
            for j, k in enumerate(keys):
                kerr = _check_key(k, builtins)
                if kerr:
                    bad(f'extension "{name}": {field}[{j}]: {kerr}')
                    continue
                if not k.builtin:
                    prev = plugin_keys.get(k.name)
                    if prev is not None and not prev._same(k):
                        bad(f'extension "{name}": {field}[{j}]: key "{k.name}" is declared twice in this plugin, '
                            f"differently: {_spec_text(prev)} and {_spec_text(k)}")
                        continue
                    plugin_keys[k.name] = k
                    if field == "writes":
                        owners.setdefault(k.name, []).append(name)
                if into is not None:
                    into.add(k.name)
        for k in spec.resets:
            if isinstance(k, Key) and k.name not in writes:
                bad(f'extension "{name}": resets key "{k.name}" but does not list it in writes')
        exts[name] = ExtEntry(ext, spec, hooks, frozenset(reads), frozenset(writes))

        for info in HOOKS:
            if info.hook not in hooks:
                continue
            order = hook_order.get(info.hook, spec.order)
            if not _is_int(order) or not _INT32_MIN <= order <= _INT32_MAX:
                bad(f'extension "{name}": order {order!r} at {info.name} is not an integer that fits in 32 bits')
                continue
            manifest.extensions.add(
                name=name,
                hook=info.hook,
                order=order,
                reads=_key_names(spec.reads),
                writes=_key_names(spec.writes),
                resets=_key_names(spec.resets),
                injects_prompt=bool(spec.injects_prompt) and info.prompt,
                timeout_ms=ms if ms and 0 < ms <= _UINT32_MAX else 0,
                required=bool(spec.required),
                once_per_session=bool(spec.once_per_session),
                consumes_signals=_sorted_unique([s for s in spec.consumes_signals if isinstance(s, str)]),
                description=spec.description or "",
                disabled=bool(spec.disabled),
                reads_history=bool(spec.reads_history) and info.hook in READS_HISTORY_HOOKS,
                reads_prompt=bool(spec.reads_prompt) and info.hook in READS_PROMPT_HOOKS,
                effects_declared=bool(spec.effects_declared),
                fail_open=bool(spec.fail_open),
                for_tools=for_tools if info.hook in TOOL_HOOKS else [],
            )

    for name, k in plugin_keys.items():
        ks = k.spec()
        w = owners.get(name)
        if w:
            ks.owner = sorted(w)[0]
        manifest.state_keys.append(ks)

    for i, t in enumerate(p.tools):
        if not isinstance(t, Tool):
            bad(f'plugin "{pname}": tools[{i}] is {type(t).__name__}, not an exocortex.Tool')
            continue
        if not isinstance(t.name, str) or not t.name or _has_space(t.name):
            bad(f'plugin "{pname}": tools[{i}] has an empty name or one with spaces ({t.name!r})')
            continue
        params = _schema_text(t, "parameters", t.parameters, bad)
        returns = _schema_text(t, "returns", t.returns, bad)
        if not callable(t.run):
            bad(f'tool "{t.name}" has no run function')
        elif params and not _valid_json(params):
            bad(f'tool "{t.name}": parameters is not valid JSON (it must be a JSON Schema)')
        elif returns and not _valid_json(returns):
            bad(f'tool "{t.name}": returns is not valid JSON (it must be a JSON Schema)')
        if t.name in tools:
            bad(f'plugin "{pname}": two tools are named "{t.name}"')
            continue
        tools[t.name] = t
        manifest.tools.add(name=t.name, description=t.description or "", parameters_json_schema=params,
                           implemented=True, prompt_file=t.prompt_file or "",
                           uses_secrets=list(t.uses_secrets or ()), category=t.category or "",
                           returns_json_schema=returns)

    for i, f in enumerate(p.files):
        if not isinstance(f, manifest_pb2.FileSpec) or not f.id or not f.path:
            bad(f'plugin "{pname}": files[{i}] needs an id and a path')
            continue
        manifest.files.add().CopyFrom(f)

    if errs:
        raise InvalidPlugin(pname, errs)
    _sort_manifest(manifest)
    return Built(manifest, exts, tools)


def _check_for_tools(name: str, tools: Any, hooks: FrozenSet[int], bad) -> List[str]:
    """Validate a Spec's for_tools, reporting each problem through bad; return the
    names as the manifest carries them (sorted, without duplicates)."""
    if isinstance(tools, str):  # for_tools="shell" would otherwise be five one-letter tools
        bad(f'extension "{name}": for_tools is a string; give a list of tool names, e.g. for_tools=[{tools!r}]')
        return []
    try:
        items = list(tools or ())
    except TypeError:
        bad(f'extension "{name}": for_tools is {type(tools).__name__}; give a list of tool names')
        return []
    if items and not hooks & TOOL_HOOKS:
        bad(f'extension "{name}": for_tools applies to tool_execute_before, tool_execute_after, '
            "hist_add_tool_result and tool_output_update, which it does not implement")
    names = []
    for j, t in enumerate(items):
        if not isinstance(t, str):
            bad(f'extension "{name}": for_tools[{j}] is {type(t).__name__}, not a tool name')
        elif not t.strip():
            bad(f'extension "{name}": an empty name in for_tools')
        else:
            names.append(t)
    return _sorted_unique(names)


def _schema_text(t, field, schema, bad):
    """A tool's schema field (JSON text or a dict) as JSON text."""
    if isinstance(schema, str):
        return schema
    try:
        return json.dumps(schema, sort_keys=True, separators=(",", ":"))
    except (TypeError, ValueError) as e:
        bad(f'tool "{t.name}": {field} cannot be written as JSON: {e}')
        return ""


def _valid_json(s: str) -> bool:
    try:
        json.loads(s)
    except ValueError:
        return False
    return True


def _key_names(keys: Sequence[Any]) -> List[str]:
    return _sorted_unique([k.name for k in keys if isinstance(k, Key)])


def _spec_text(k: Key) -> str:
    s = k.spec()
    return f"{{name: {s.name}, type: {s.type}, scope: {manifest_pb2.Scope.Name(s.scope) if s.scope in _SCOPES else s.scope}, doc: {s.doc!r}, flag: {s.flag}}}"


def _sort_manifest(m: manifest_pb2.ManifestResponse) -> None:
    """Put every list in a stable order, so the same plugin always answers the same
    manifest: extensions by name then hook, keys and tools by name, files by id,
    user and path."""
    def resort(field, key) -> None:
        items = sorted(list(field), key=key)
        copies = [type(x)() for x in items]
        for c, x in zip(copies, items):
            c.CopyFrom(x)
        del field[:]
        field.extend(copies)

    resort(m.extensions, lambda e: (e.name.encode(), e.hook))
    resort(m.state_keys, lambda k: k.name.encode())
    resort(m.tools, lambda t: t.name.encode())
    resort(m.files, lambda f: (f.id.encode(), f.user.encode(), f.path.encode()))
