"""Agent Zero's model objects as a ported file uses them: what
agent.get_utility_model() returns, whose unified_call asks the host's utility
model (Host.CallUtilityModel, through exocortex.a0.utility: the same secrets
masking, limits and util_model_call hooks as call_utility_model). It takes
Agent Zero's arguments: system_message and user_message, or messages (the
langchain_core.messages classes, or role/content dicts), and response_callback
(chunk, full) for the text as it arrives; it returns (response, reasoning),
reasoning "" (the utility service returns the answer only).

messages become one system text (the system messages' contents, joined) and
one message: a single human message's content as it is, or else the
conversation as "user: ..." / "assistant: ..." lines, as the host's utility
service takes one system and one message."""

from __future__ import annotations

import inspect
from typing import Any, Awaitable, Callable, List, Optional, Tuple, Union

from exocortex.a0 import utility
from exocortex.a0.langchain_messages import content_text

Callback = Callable[[str, str], Union[Awaitable[None], None]]

_ROLES = {"human": "user", "user": "user", "ai": "assistant", "assistant": "assistant", "tool": "tool"}


def _role_content(m: Any) -> Tuple[str, str]:
    if isinstance(m, dict):
        return str(m.get("role") or m.get("type") or "user"), content_text(m.get("content", ""))
    if isinstance(m, (tuple, list)) and len(m) == 2:
        return str(m[0]), content_text(m[1])
    return str(getattr(m, "type", "human")), content_text(getattr(m, "content", m))


def split_messages(messages: List[Any]) -> Tuple[str, str]:
    """The system text and the one message the utility service takes."""
    system: List[str] = []
    rest: List[Tuple[str, str]] = []
    for m in messages:
        role, text = _role_content(m)
        if role == "system":
            system.append(text)
        else:
            rest.append((_ROLES.get(role, role), text))
    if len(rest) == 1 and rest[0][0] == "user":
        return "\n\n".join(system), rest[0][1]
    return "\n\n".join(system), "\n".join(f"{r}: {t}" for r, t in rest)


class UtilityModel:
    """agent.get_utility_model(): the host's utility model (see the module's doc)."""

    def __init__(self, agent: Any) -> None:
        self._agent = agent

    async def unified_call(self, system_message: str = "", user_message: str = "", messages: Optional[List[Any]] = None,
                           response_callback: Optional[Callback] = None, reasoning_callback: Any = None,
                           tokens_callback: Any = None, rate_limiter_callback: Any = None,
                           **kwargs: Any) -> Tuple[str, str]:
        del reasoning_callback, tokens_callback, rate_limiter_callback, kwargs  # no reasoning or token stream here
        if messages:
            system, message = split_messages(list(messages))
            if system_message:
                system = system_message + ("\n\n" + system if system else "")
            if user_message:
                message = (message + "\n" if message else "") + user_message
        else:
            system, message = system_message, user_message
        cb = None
        if response_callback is not None:
            full: List[str] = []

            async def cb(delta: str) -> None:
                full.append(delta)
                r = response_callback(delta, "".join(full))
                if inspect.isawaitable(r):
                    await r
        text = await utility.call_utility_model(self._agent, system, message, cb)
        return text, ""
