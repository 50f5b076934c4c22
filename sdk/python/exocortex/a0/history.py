"""Agent Zero's helpers.history, for what extensions read of it: the text of a
history's messages (output_text). The history is Exocortex's core's, read-only
here: a file reads it as self.agent.history (the messages of the hook's
request), whose output() gives role/content dicts; output_text also takes
Agent Zero's {"ai": bool, "content": ...} dicts.

Building or changing a history (History, Topic, add_message, compress,
deserialize_history) has no counterpart: the core keeps the history; add text
to the prompt with a prompt block (loop_data.extras_temporary) instead."""

from __future__ import annotations

import json
from typing import Any, Dict, List


class NoCounterpart(RuntimeError):
    """An Agent Zero call with no counterpart in a ported plugin."""


def _needs_a_hand(call: str) -> NoCounterpart:
    return NoCounterpart(f"a0compat: helpers.history.{call} has no counterpart in a ported plugin: the history is "
                         "the core's; read it as self.agent.history, add text with loop_data.extras_temporary")


def _is_ai(m: Dict[str, Any]) -> bool:
    if "ai" in m:
        return bool(m["ai"])
    return str(m.get("role", "")).lower() in ("assistant", "ai")


def _content(c: Any) -> str:
    if isinstance(c, str):
        return c
    return json.dumps(c, ensure_ascii=False, default=str)


def output_text(messages: List[Dict[str, Any]], ai_label: str = "ai", human_label: str = "human") -> str:
    """The messages as "label: content" lines, the AI's under ai_label, the others under human_label."""
    return "\n".join(f"{ai_label if _is_ai(m) else human_label}: {_content(m.get('content', ''))}"
                     for m in messages or [])


def deserialize_history(json_data: str, agent: Any = None) -> Any:
    raise _needs_a_hand("deserialize_history")


def output_langchain(messages: List[Dict[str, Any]]) -> Any:
    raise _needs_a_hand("output_langchain")
