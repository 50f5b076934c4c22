"""The hooks of the agent loop, derived from the protocol rather than written down a
second time: a hook's name comes from the Hook enum (HOOK_MESSAGE_LOOP_END is
"message_loop_end", which is also the name of the extension method that handles it),
its RPC and its request and response classes from the Plugin service, and whether it
may add prompt text from whether its response has the prompt_blocks field (15).
"""

from __future__ import annotations

from typing import NamedTuple, Optional, Tuple, Type, Union

from google.protobuf.message import Message

from exocortex.v1 import context_pb2, hooks_pb2, manifest_pb2, plugin_pb2

# The field number of prompt_blocks in the three prompt-assembly responses,
# reserved in every other response.
PROMPT_BLOCKS_FIELD = 15


class HookInfo(NamedTuple):
    """One hook: its enum value, snake_case name, RPC and message classes."""

    hook: int
    # "message_loop_end": the documentation's name and the extension method's.
    name: str
    # "MessageLoopEnd": the Plugin service's RPC.
    method: str
    request: Type[Message]
    response: Type[Message]
    # Whether the response has prompt_blocks (message_loop_prompts_before,
    # system_prompt, message_loop_prompts_after).
    prompt: bool


def _table() -> Tuple[HookInfo, ...]:
    modules = {m.DESCRIPTOR.name: m for m in (context_pb2, hooks_pb2, manifest_pb2, plugin_pb2)}
    service = plugin_pb2.DESCRIPTOR.services_by_name["Plugin"]
    methods = {m.name.lower(): m for m in service.methods}
    out = []
    for value in manifest_pb2.Hook.DESCRIPTOR.values:
        if value.number == manifest_pb2.HOOK_UNSPECIFIED:
            continue
        name = value.name[len("HOOK_"):].lower()
        m = methods.get(name.replace("_", ""))
        if m is None:  # the protocol is generated from one file: a build-time bug
            raise RuntimeError(f"exocortex: the Plugin service has no RPC for hook {name}")
        req = getattr(modules[m.input_type.file.name], m.input_type.name)
        resp = getattr(modules[m.output_type.file.name], m.output_type.name)
        prompt = m.output_type.fields_by_number.get(PROMPT_BLOCKS_FIELD) is not None
        out.append(HookInfo(value.number, name, m.name, req, resp, prompt))
    return tuple(out)


# Every hook, in the Hook enum's order (which is not the firing order: that is
# _hooks_gen.FIRING_ORDER, from core/hooks).
HOOKS: Tuple[HookInfo, ...] = _table()


def lookup(hook: Union[int, str]) -> Optional[HookInfo]:
    """Return the hook with this enum value or snake_case name, or None."""
    for h in HOOKS:
        if h.hook == hook or h.name == hook:
            return h
    return None


def hook_name(hook: int) -> str:
    """Return the snake_case name of a hook: HOOK_MESSAGE_LOOP_END is
    "message_loop_end"; "" for HOOK_UNSPECIFIED (a tool call)."""
    h = lookup(hook)
    if h is not None:
        return h.name
    return "" if hook == manifest_pb2.HOOK_UNSPECIFIED else f"hook {hook}"


def is_prompt_hook(hook: Union[int, str]) -> bool:
    """Report whether extensions at this hook may add prompt blocks."""
    h = lookup(hook)
    return h is not None and h.prompt
