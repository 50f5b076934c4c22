"""Agent Zero's helpers.errors: the exception classes extensions raise and the
error formatting they log.

Raised out of an extension, each is the extension's error in Exocortex: the host
logs it with the extension's name and the turn goes on (Agent Zero shows a
RepairableException to the model; Exocortex's error_format hook is where a
correction the model sees is made)."""

from __future__ import annotations

import traceback
from typing import List


class RepairableException(Exception):
    """An error the model could repair (Agent Zero sends it the message)."""


class HandledException(Exception):
    """An error already reported; Agent Zero stops the turn without another report."""


class InterventionException(Exception):
    """The operator intervened."""


def error_text(e: BaseException) -> str:
    return str(e)


def format_error(e: BaseException, start_entries: int = 6, end_entries: int = 4) -> str:
    """The exception's traceback, its first start_entries and last end_entries
    frames (the middle elided), and its type and message last."""
    frames: List[str] = traceback.format_tb(e.__traceback__) if e.__traceback__ else []
    if len(frames) > start_entries + end_entries:
        skipped = len(frames) - start_entries - end_entries
        frames = frames[:start_entries] + [f"  ... {skipped} frames skipped ...\n"] + (
            frames[-end_entries:] if end_entries > 0 else [])
    head = "Traceback (most recent call last):\n" + "".join(frames) if frames else ""
    return f"{head}{type(e).__name__}: {e}".strip()
