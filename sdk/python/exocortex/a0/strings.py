"""Agent Zero's helpers.strings: text helpers extensions use (sanitizing,
truncating, formatting keys, and the §§include(path) placeholders a model may
put in a tool's arguments, replaced with the file's text)."""

from __future__ import annotations

import re
from typing import Any, Dict

from exocortex.a0 import files

INCLUDE_PATTERN = r"§§include\(([^)]+)\)"


def sanitize_string(s: Any, encoding: str = "utf-8") -> str:
    """s as text, with what the encoding cannot hold (lone surrogates) replaced."""
    return str(s).encode(encoding, "replace").decode(encoding, "replace")


def format_key(key: str) -> str:
    """A key as words in title case: "max_depth" and "maxDepth" -> "Max Depth"."""
    spaced = "".join(c if c.isalnum() else " " for c in key)
    spaced = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", spaced)
    return " ".join(w.capitalize() for w in spaced.split())


def dict_to_text(d: Dict[Any, Any]) -> str:
    """Each entry as "Key:" then its value, a blank line between entries."""
    return "\n\n".join(f"{format_key(str(k))}:\n{v}" for k, v in d.items())


def truncate_text(text: str, length: int, at_end: bool = True, replacement: str = "...") -> str:
    """text cut to length characters (keeping the start when at_end, else the
    end), with replacement where it was cut."""
    if len(text) <= length:
        return text
    return text[:length] + replacement if at_end else replacement + text[len(text) - length:]


def truncate_text_by_ratio(text: str, threshold: int, replacement: str = "...", ratio: float = 0.5) -> str:
    """text cut to threshold characters in all, replacement included, the cut
    placed at ratio of the way (0: at the start, 1: at the end)."""
    threshold = int(threshold)
    if not threshold or len(text) <= threshold:
        return text
    keep = threshold - len(replacement)
    if keep <= 0:
        return replacement[:threshold]
    head = int(keep * max(0.0, min(1.0, float(ratio))))
    tail = keep - head
    return text[:head] + replacement + (text[len(text) - tail:] if tail else "")


def replace_file_includes(text: str, placeholder_pattern: str = INCLUDE_PATTERN) -> str:
    """Every placeholder (group 1: a path) replaced with that file's text,
    read through helpers.files (the plugin's directory and the project); a
    placeholder whose file cannot be read stays as it is."""
    if not text:
        return text

    def repl(m: "re.Match[str]") -> str:
        try:
            return files.read_file(files.fix_dev_path(m.group(1).strip()))
        except (OSError, PermissionError, ValueError):
            return m.group(0)

    return re.sub(placeholder_pattern, repl, text)


__all__ = ["sanitize_string", "format_key", "dict_to_text", "truncate_text", "truncate_text_by_ratio",
           "replace_file_includes"]
