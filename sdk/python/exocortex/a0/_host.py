"""What the host tells a ported plugin about its session, for the stand-ins of
Agent Zero's settings, tokens, model config and tool policy:

  - the session's settings (config.PluginSettings: models, context window, loop
    limits), which the host puts in the plugin's environment as JSON
    (EXOCORTEX_SETTINGS) when it starts the plugin;
  - per call, the context's model and agent profile, and its custom_data: the
    factor the host counts tokens with now (exocortex_tokens_per_byte), the
    tokens it adds per message and the context window;
  - the tools the host gives the model, seen in the last request that carried
    them (system_prompt's tools, chat_model_call_before's), observed by the
    layer around every call (observe)."""

from __future__ import annotations

import json
import os
import threading
from typing import Any, Dict, List, Optional, Tuple

from exocortex.a0 import _runtime

ENV_SETTINGS = "EXOCORTEX_SETTINGS"
# The host's estimate before the model has answered (core/loop/tokens.go):
# three bytes a token, and six tokens of chat template a message.
DEFAULT_TOKENS_PER_BYTE = 1.0 / 3
DEFAULT_MESSAGE_OVERHEAD = 6

_lock = threading.Lock()
# The last token factor, message overhead and window the host sent, and the
# tools (name, description) of the last request that listed them.
_seen: Dict[str, Any] = {"tokens_per_byte": None, "message_overhead": None, "num_ctx": None, "tools": None}


def settings() -> Dict[str, Any]:
    """The settings the host started the plugin with ({} when it sent none:
    the plugin was not started by an Exocortex host)."""
    raw = os.environ.get(ENV_SETTINGS, "")
    if not raw:
        return {}
    try:
        v = json.loads(raw)
    except ValueError as e:
        raise ValueError(f"a0compat: {ENV_SETTINGS} is not JSON ({e}): the host writes it; "
                         "unset it to run without the host's settings") from e
    return v if isinstance(v, dict) else {}


def context() -> Any:
    """The context of the call running now (or of the agent's last call), or None."""
    agent = _runtime.current_agent.get()
    call = getattr(agent, "_call", None) or getattr(agent, "_last_call", None)
    return call.context if call is not None else None


def observe(req: Any) -> None:
    """Take what the host tells in a hook's request: its context's custom_data
    (the token estimate) and the tools the request lists."""
    call = getattr(req, "call", None)
    ctx = getattr(call, "context", None) if call is not None else None
    fields = ctx.custom_data.fields if ctx is not None and ctx.HasField("custom_data") else {}
    tools = None
    ts = getattr(req, "tools", None)
    if ts is not None and len(ts) > 0:
        tools = [(t, "") if isinstance(t, str) else (t.name, getattr(t, "description", "")) for t in ts]
    with _lock:
        for key, name in (("tokens_per_byte", "exocortex_tokens_per_byte"),
                          ("message_overhead", "exocortex_message_overhead"), ("num_ctx", "exocortex_num_ctx")):
            if name in fields:
                _seen[key] = fields[name].number_value
        if tools is not None:
            _seen["tools"] = tools


def token_estimate() -> Tuple[float, int]:
    """The host's tokens a byte and tokens a message, as of the last call."""
    with _lock:
        f, o = _seen["tokens_per_byte"], _seen["message_overhead"]
    return (f if f and f > 0 else DEFAULT_TOKENS_PER_BYTE,
            int(o) if o is not None else DEFAULT_MESSAGE_OVERHEAD)


def num_ctx() -> int:
    """The context window of the model calls: the host's last word, else the settings'."""
    with _lock:
        n = _seen["num_ctx"]
    if n:
        return int(n)
    return int(settings().get("num_ctx") or 0)


def tools() -> Optional[List[Tuple[str, str]]]:
    """The tools (name, description) the host gave the model in the last request
    that listed them; None before any did."""
    with _lock:
        t = _seen["tools"]
    return list(t) if t is not None else None


def model() -> str:
    """The chat model: the running call's, else the settings'."""
    ctx = context()
    return (ctx.model if ctx is not None and ctx.model else "") or str(settings().get("model") or "")


def agent_profile() -> str:
    ctx = context()
    return ctx.agent_profile if ctx is not None else ""


def session_id() -> str:
    ctx = context()
    return ctx.session_id if ctx is not None else ""
