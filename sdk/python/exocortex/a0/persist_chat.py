"""Agent Zero's helpers.persist_chat, onto Exocortex's sessions.

The host saves the session itself, every message as it is added
(sessions/NAME.jsonl in the Exocortex home), so save_tmp_chat and
save_tmp_chats have nothing left to do and return. A chat's folder, where
Agent Zero extensions keep files beside the chat (message files of long tool
results), is a folder of the ported plugin's directory per session:
chats/<session id>, declared as the plugin's data (helpers.files may write there).

Loading, exporting and removing chats belong to the host (`exocortex
--resume NAME`, `exocortex -c`, /sessions in a session): those functions raise NoCounterpart naming the call."""

from __future__ import annotations

import os
import re
from typing import Any, List, Set

from exocortex.a0 import _host, _runtime

CHATS_FOLDER = "chats"
MESSAGES_FOLDER = "messages"
CHAT_FILE_NAME = "chat.json"

_SAFE = re.compile(r"[^A-Za-z0-9._-]")


class NoCounterpart(RuntimeError):
    """An Agent Zero call whose work belongs to the host here."""


def _needs_a_hand(call: str, what: str) -> NoCounterpart:
    return NoCounterpart(f"a0compat: helpers.persist_chat.{call} has no counterpart in a ported plugin: {what}")


def _ctxid(ctxid: Any) -> str:
    """The folder name of a chat: the session of the call running now when ctxid
    is the layer's context id (or empty), else ctxid made safe for a path."""
    s = str(getattr(ctxid, "id", ctxid) or "")
    if not s or s == "exocortex":
        s = _host.session_id() or "default"
    s = _SAFE.sub("_", s).strip("._")
    if not s:
        raise ValueError(f"a0compat: persist_chat: chat id {ctxid!r} names no folder; pass the context's id")
    return s


def get_chat_folder_path(ctxid: Any) -> str:
    """The folder of the chat: chats/<session id> in the ported plugin's directory."""
    return os.path.join(_runtime.get().plugin_dir, CHATS_FOLDER, _ctxid(ctxid))


def get_chat_msg_files_folder(ctxid: Any) -> str:
    """The folder of the chat's message files: chats/<session id>/messages."""
    return os.path.join(get_chat_folder_path(ctxid), MESSAGES_FOLDER)


def save_tmp_chat(context: Any = None) -> None:
    """Nothing to do: the host has saved every message of the session as it was added."""


def save_tmp_chats() -> None:
    """Nothing to do: the host saves its sessions as they change."""


def mark_chat_saved(context: Any = None) -> None:
    """Nothing to do: every chat here is the host's session, saved as it changes."""


def saved_chat_ids() -> Set[str]:
    """The chats with a folder in this plugin (their session ids)."""
    root = os.path.join(_runtime.get().plugin_dir, CHATS_FOLDER)
    try:
        return {d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d))}
    except FileNotFoundError:
        return set()


def remove_msg_files(ctxid: Any) -> None:
    """Remove the chat's message files (the folder this plugin keeps them in)."""
    if not str(getattr(ctxid, "id", ctxid) or "").strip():
        raise ValueError("a0compat: persist_chat.remove_msg_files: empty chat id: pass the context's id")
    folder = get_chat_msg_files_folder(ctxid)
    for name in os.listdir(folder) if os.path.isdir(folder) else []:
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            os.remove(path)


def load_tmp_chats() -> List[str]:
    raise _needs_a_hand("load_tmp_chats", "the host loads sessions itself (`exocortex --resume NAME`, `exocortex -c`)")


def load_json_chats(jsons: List[str]) -> List[str]:
    raise _needs_a_hand("load_json_chats", "Agent Zero chat JSON is not an Exocortex session; "
                                           "start a session with `exocortex` and give it the text instead")


def export_json_chat(context: Any = None) -> str:
    raise _needs_a_hand("export_json_chat", "the session is the host's sessions/NAME.jsonl in the Exocortex home; "
                                            "read it there")


def remove_chat(ctxid: Any) -> None:
    raise _needs_a_hand("remove_chat", "sessions are the operator's (sessions/NAME.jsonl in the Exocortex home); "
                                       "remove_msg_files removes this plugin's files of the chat")
