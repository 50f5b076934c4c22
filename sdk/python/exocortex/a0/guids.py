"""Agent Zero's helpers.guids: short random ids."""

from __future__ import annotations

import secrets
import string

_ALPHABET = string.ascii_letters + string.digits


def generate_id(length: int = 8) -> str:
    """A random id of length letters and digits."""
    return "".join(secrets.choice(_ALPHABET) for _ in range(length))


__all__ = ["generate_id"]
