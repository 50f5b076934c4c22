"""What a plugin declares: Spec (one extension), Tool, Plugin; and the exceptions
that decide what the host gets back when something fails."""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional, Sequence, Union

import grpc

from exocortex.v1 import context_pb2, manifest_pb2

if TYPE_CHECKING:  # pragma: no cover
    from exocortex.call import Call
    from exocortex.keys import Key
    from exocortex.log import Logger


@dataclass(frozen=True)
class Spec:
    """Declares an extension. spec() is called once, when the server is built; each
    hook method the extension defines becomes one ExtensionSpec of the manifest, with
    this name and these fields."""

    # Unique across all plugins, e.g. "failure_tracker".
    name: str
    # Places the extension among the others at the same hook (ascending, across all
    # plugins).
    order: int = 0
    # Overrides order at particular hooks ("system_prompt": 15, or
    # manifest_pb2.HOOK_SYSTEM_PROMPT: 15), for an extension that handles more than
    # one. Each hook named must be one the extension handles.
    hook_order: Mapping[Union[str, int], int] = field(default_factory=dict)
    # Keys the extension reads: the host hands it only these; Key.get refuses others.
    reads: Sequence["Key"] = ()
    # Keys the extension sets or resets: Key.set and Key.reset refuse others.
    writes: Sequence["Key"] = ()
    # Keys the extension clears, a subset of writes, for the wiring lint.
    resets: Sequence["Key"] = ()
    # The extension adds prompt blocks; only message_loop_prompts_before,
    # system_prompt and message_loop_prompts_after may.
    injects_prompt: bool = False
    # Per-call deadline in seconds (float or datetime.timedelta), rounded up to a
    # millisecond; 0 means the host's default.
    timeout: Union[float, datetime.timedelta] = 0
    # A failure of the extension stops the turn instead of being skipped.
    required: bool = False
    # The host runs the extension at most once per session at each hook.
    once_per_session: bool = False
    # The signals (constants of exocortex.signals) the extension reacts to.
    consumes_signals: Sequence[str] = ()
    description: str = ""
    # Shipped disabled: runs only when the operator's config enables it.
    disabled: bool = False
    # The extension reads the whole conversation: the history of
    # message_loop_prompts_before, message_loop_prompts_after and monologue_end
    # requests, and the prompt of before_main_llm_call. Without it those fields are
    # empty (the host does not ship a long session's history with every call); the
    # context's recent messages are always there.
    reads_history: bool = False
    # The extension reads the prompt as the extensions before it at the same hook
    # left it: the system_prompt of system_prompt requests, the extras and
    # prompt_tokens of message_loop_prompts_after. Without it those fields are empty,
    # and the host may call the extension while the ones before it still run.
    reads_prompt: bool = False
    # The extension's only effects are the state keys and data files it declares:
    # it writes no other file, calls no service (a model, the network, the host's
    # RunSubordinate) and keeps no cache another extension could observe. Only then
    # does the host call it while extensions of other plugins run; otherwise it runs
    # in order, after the ones before it have answered.
    effects_declared: bool = False
    # The action goes ahead when the extension fails at a hook that can stop it
    # (tool_execute_before, text_editor_write_before, text_editor_patch_before).
    # Without it an exception (HandledException or any other), a crash or a missed
    # deadline there stops the action: a guard that cannot answer allows nothing.
    # Declare it for an extension that only watches; elsewhere the host refuses it.
    fail_open: bool = False
    # Limits tool_execute_before and tool_execute_after to calls of these tools
    # (empty: every tool). The wiring lint reports a name no loaded plugin provides.
    for_tools: Sequence[str] = ()


# A tool's run: (call, args) -> ToolResult, a str (the content) or None.
ToolRun = Callable[["Call", Any], Union[context_pb2.ToolResult, str, None]]


@dataclass(frozen=True)
class Tool:
    """A tool the agent may call, served by the plugin."""

    # What the model writes as tool_name.
    name: str
    description: str = ""
    # The JSON Schema of the arguments object, as JSON text or a dict; "" for none.
    parameters: Union[str, Mapping[str, Any]] = ""
    # Runs the tool with the decoded arguments object ({} when the model gave none).
    # Raise ToolError for a failure the model should see; any other exception is a
    # bug, answered with INTERNAL. Tools have no shared-state access in protocol v1.
    run: Optional[ToolRun] = None
    # The prompt file documenting the tool, e.g. "agent.system.tool.hello_time.md".
    prompt_file: str = ""
    # The operator's secrets the tool may receive: the host puts their values in
    # place of §§secret(NAME) in the arguments it sends this tool only; "*" takes
    # every configured secret. A tool that declares none sees the placeholders.
    uses_secrets: Sequence[str] = ()
    # The tool's category in the tool registry (exocortex serve's GET /tools?category=).
    category: str = ""
    # The JSON Schema of the tool's result, as JSON text or a dict; "" for none.
    returns: Union[str, Mapping[str, Any]] = ""


@dataclass
class Plugin:
    """What one plugin process serves."""

    # Unique among loaded plugins.
    name: str
    version: str = ""
    # Extension objects (each with spec() and hook methods) and tools; not both empty.
    extensions: Sequence[object] = ()
    tools: Sequence[Tool] = ()
    # The data files the plugin's extensions and tools read or write.
    files: Sequence[manifest_pb2.FileSpec] = ()
    # The extensions or tools call the host's utility model
    # (Call.call_utility_model); the host refuses the call from a plugin that does
    # not declare it.
    uses_utility_model: bool = False
    # The extensions or tools use the home's memory store through the host
    # (Call.memory()); the host refuses every memory call from a plugin that does
    # not declare it.
    uses_memory: bool = False
    # The memory areas the plugin may write ("main", "notes", ...; "*" for every
    # area); the host refuses a write to any other. Reads reach every area.
    memory_write_areas: Sequence[str] = ()
    # Receives the plugin's log, including every Call's logger. None means stderr in
    # the JSON form the host parses, at info level.
    logger: Optional["Logger"] = None


class InvalidPlugin(ValueError):
    """The plugin cannot be served: every problem found, each naming the extension,
    key or tool at fault (serve() prints them and exits 1)."""

    def __init__(self, plugin: str, problems: Sequence[str]) -> None:
        self.plugin = plugin
        self.problems = list(problems)
        super().__init__(f'plugin "{plugin}" is not valid:\n' + "\n".join(self.problems))


class HookError(Exception):
    """An extension's failure: the host gets UNKNOWN with
    'extension "NAME" at HOOK: message' (what a Go extension's returned error gives)."""


class StatusError(Exception):
    """A failure with a gRPC status code of the extension's choosing, passed to the
    host as it is: raise StatusError(grpc.StatusCode.RESOURCE_EXHAUSTED, "slow down")."""

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(details)
        self.code = code
        self.details = details


class ToolError(Exception):
    """A tool's failure as the model sees it: it becomes ToolResult.error, with the
    other fields of result (e.g. partial output in content) if given."""

    def __init__(self, message: str, result: Optional[context_pb2.ToolResult] = None) -> None:
        super().__init__(message)
        self.result = result
