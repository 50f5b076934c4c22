"""Agent Zero's helpers.tokens, counted as Exocortex's host counts for its
context budget (core/loop/tokens.go): no tokenizer runs; a text of n bytes is
ceil(n * f) tokens, f the host's tokens a byte. Before the model's first reply
the host takes f = 1/3 and so does this module; after it, the host recalibrates
f from the model server's own counts and sends the factor in every hook call's
context (custom_data exocortex_tokens_per_byte), which the layer takes, so a
ported file and the budget agree on what a text costs.

encoding_name is accepted and ignored: the host has no tiktoken encoding."""

from __future__ import annotations

import math
from typing import Literal

from exocortex.a0 import _host

# Agent Zero's margin of approximate_tokens over count_tokens.
APPROX_BUFFER = 1.1
TRIM_BUFFER = 0.8


def count_tokens(text: str, encoding_name: str = "cl100k_base") -> int:
    """The tokens of text by the host's estimate (without the per-message overhead)."""
    if not text:
        return 0
    f, _ = _host.token_estimate()
    return int(math.ceil(len(str(text).encode("utf-8")) * f))


def count_message_tokens(text: str) -> int:
    """The tokens of text sent as one message: count_tokens plus the host's
    per-message overhead (the chat template's role markers)."""
    _, overhead = _host.token_estimate()
    return overhead + count_tokens(text)


def approximate_tokens(text: str) -> int:
    """count_tokens with Agent Zero's margin (APPROX_BUFFER)."""
    return int(count_tokens(text) * APPROX_BUFFER)


def trim_to_tokens(text: str, max_tokens: int, direction: Literal["start", "end"] = "end",
                   ellipsis: str = "...") -> str:
    """text cut to about max_tokens tokens by the host's estimate: the start
    kept (direction "start") or the end (direction "end"), ellipsis marking the cut."""
    if direction not in ("start", "end"):
        raise ValueError(f"a0compat: trim_to_tokens direction {direction!r}: want 'start' or 'end'")
    if count_tokens(text) <= max_tokens:
        return text
    f, _ = _host.token_estimate()
    keep = max(0, int(max_tokens * TRIM_BUFFER / f))
    raw = text.encode("utf-8")
    if direction == "start":
        return raw[:keep].decode("utf-8", "ignore") + ellipsis
    return ellipsis + raw[len(raw) - keep:].decode("utf-8", "ignore")
