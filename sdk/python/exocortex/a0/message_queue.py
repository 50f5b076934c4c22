"""Agent Zero's helpers.message_queue: the user messages queued in a chat's
context data while the agent works (Agent Zero's web UI queues them), sent one
by one when it finishes.

The queue is kept as Agent Zero keeps it, in the context's "message_queue"
data. Exocortex's own front ends queue a user's input themselves and hand it to
the host, which never puts it in a plugin's context, so a ported tree's queue
holds only what its own files add. Sending a queued message starts a new turn,
which only the operator's front end does here: send_next and send_all_aggregated
raise NoCounterpart when there is something to send (and return False / 0 when
the queue is empty, as Agent Zero's do)."""

from __future__ import annotations

import time
from typing import Any, Dict, List, Optional

from exocortex.a0 import guids

QUEUE_KEY = "message_queue"
QUEUE_SEQ_KEY = "message_queue_seq"


class NoCounterpart(RuntimeError):
    """An Agent Zero call whose work belongs to the host here."""


def get_queue(context: Any) -> List[Dict[str, Any]]:
    q = context.get_data(QUEUE_KEY)
    if not isinstance(q, list):
        q = []
        context.set_data(QUEUE_KEY, q)
    return q


def add(context: Any, text: str, attachments: Optional[List[str]] = None, item_id: Optional[str] = None) -> Dict[str, Any]:
    seq = int(context.get_data(QUEUE_SEQ_KEY) or 0) + 1
    context.set_data(QUEUE_SEQ_KEY, seq)
    item = {"id": item_id or guids.generate_id(), "text": text, "attachments": list(attachments or []),
            "seq": seq, "ts": time.time()}
    get_queue(context).append(item)
    return item


def remove(context: Any, item_id: Optional[str] = None) -> int:
    q = get_queue(context)
    before = len(q)
    q[:] = [] if item_id is None else [i for i in q if i.get("id") != item_id]
    return before - len(q)


def pop_first(context: Any) -> Optional[Dict[str, Any]]:
    q = get_queue(context)
    return q.pop(0) if q else None


def pop_item(context: Any, item_id: str) -> Optional[Dict[str, Any]]:
    q = get_queue(context)
    for i, item in enumerate(q):
        if item.get("id") == item_id:
            return q.pop(i)
    return None


def has_queue(context: Any) -> bool:
    return bool(get_queue(context))


def _send_refused(call: str, n: int) -> NoCounterpart:
    return NoCounterpart(
        f"a0compat: helpers.message_queue.{call}: {n} queued message(s) would start a new turn, which only the "
        "operator's front end does in Exocortex (the host queues a user's input itself); drop the call, or "
        "give the text to the model as a prompt block")


def send_message(context: Any, item: Dict[str, Any], source: str = " (from queue)") -> None:
    raise _send_refused("send_message", 1)


def send_next(context: Any) -> bool:
    if not has_queue(context):
        return False
    raise _send_refused("send_next", len(get_queue(context)))


def send_all_aggregated(context: Any) -> int:
    if not has_queue(context):
        return 0
    raise _send_refused("send_all_aggregated", len(get_queue(context)))


__all__ = ["QUEUE_KEY", "QUEUE_SEQ_KEY", "NoCounterpart", "get_queue", "add", "remove", "pop_first", "pop_item",
           "has_queue", "send_message", "send_next", "send_all_aggregated"]
