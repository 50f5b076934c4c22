"""Agent Zero's prompt files, read as Agent Zero v1.7 reads them (its
read_prompt and parse_prompt): a prompt file NAME.md may have

  - a variables file NAME.py beside it: a class with a get_variables(file,
    backup_dirs, **kwargs) method returning a dict, whose entries fill the
    file's placeholders (the caller's keyword arguments win);
  - {{if EXPR}} ... {{endif}} blocks (nested), kept when EXPR, a Python
    expression over the variables, is true;
  - {{name}} placeholders, replaced by the variables;
  - {{ include "OTHER.md" }} lines, replaced by OTHER.md read the same way
    (with the caller's keyword arguments, not this file's variables), and
    {{ include original }}, the file of the same name in a later directory.

The directories are searched in order (the ported plugin's prompts/ first).
A variables file that cannot be loaded (an import of an Agent Zero internal
without a stand-in) is reported once on stderr, and its placeholders are left
as they are: the rest of the prompt is still read. A missing include raises
FileNotFoundError naming the file and where it was looked for."""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from typing import Any, Dict, List, Optional, Sequence, Set

_INCLUDE = re.compile(r"{{\s*include\s*['\"](.*?)['\"]\s*}}")
_ORIGINAL = re.compile(r"{{\s*include\s+original\s*}}")
_TOKEN = re.compile(r"{{\s*(if\b.*?|endif)\s*}}", re.DOTALL)
_SPACED_VAR = re.compile(r"\{\{\s*(\w+)\s*\}\}")

# Variables files that failed to load, reported once per process.
_reported: Set[str] = set()


def find(file: str, dirs: Sequence[str]) -> str:
    """The first directory's copy of file (a path's own directory first)."""
    if os.path.dirname(file):
        dirs = [os.path.dirname(file)] + list(dirs)
        file = os.path.basename(file)
    for d in dirs:
        p = os.path.join(d, file)
        if os.path.isfile(p):
            return p
    raise FileNotFoundError(f"prompt file {file!r} is not in {', '.join(dirs) or '(no directory)'}: "
                            "copy it from your Agent Zero prompts/ directory into the plugin's prompts/")


def variables(path: str, dirs: Sequence[str], **kwargs: Any) -> Dict[str, Any]:
    """What the variables file beside the prompt file at path gives, or {}."""
    py = os.path.splitext(path)[0] + ".py"
    if not path.endswith(".md") or not os.path.isfile(py):
        return {}
    try:
        spec = importlib.util.spec_from_file_location(f"a0_prompt_vars_{abs(hash(py))}", py)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        for obj in vars(mod).values():
            if isinstance(obj, type) and obj.__module__ == mod.__name__ and callable(getattr(obj, "get_variables", None)):
                got = obj().get_variables(path, list(dirs), **kwargs)
                return dict(got) if isinstance(got, dict) else {}
    except Exception as e:  # noqa: BLE001 - the prompt is still read, without these variables
        if py not in _reported:
            _reported.add(py)
            print(f"a0compat: the prompt variables file {py} failed ({type(e).__name__}: {e}): "
                  "its placeholders are left as they are", file=sys.stderr)
    return {}


def conditions(text: str, values: Dict[str, Any]) -> str:
    """Keeps or drops {{if EXPR}} ... {{endif}} blocks, innermost first."""
    out: List[str] = []
    stack: List[tuple] = []  # (start index in out, keep)
    pos = 0
    for m in _TOKEN.finditer(text):
        out.append(text[pos:m.start()])
        pos = m.end()
        tok = m.group(1).strip()
        if tok == "endif":
            if not stack:
                out.append(m.group(0))  # unbalanced: left as written
                continue
            start, keep = stack.pop()
            if not keep:
                del out[start:]
            continue
        expr = tok[2:].strip()
        try:
            keep = bool(eval(expr, {"__builtins__": {}}, dict(values)))  # noqa: S307 - the tree's own prompt
        except Exception:  # noqa: BLE001 - an unknown name is false, as a missing variable
            keep = False
        stack.append((len(out), keep))
    out.append(text[pos:])
    return "".join(out)


def read(file: str, dirs: Sequence[str], _seen: Optional[Set[str]] = None, **kwargs: Any) -> str:
    """The prompt file, read as Agent Zero reads it (see the module's doc)."""
    path = find(file, dirs)
    seen = set() if _seen is None else _seen
    if path in seen:
        raise ValueError(f"prompt file {path} includes itself (through {', '.join(sorted(seen))})")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    values = variables(path, dirs, **kwargs)
    values.update(kwargs)
    text = conditions(text, values)
    for k, v in values.items():
        text = text.replace("{{" + k + "}}", str(v))
    text = _SPACED_VAR.sub(lambda m: str(values[m.group(1)]) if m.group(1) in values else m.group(0), text)
    inner = seen | {path}

    def original(_: Any) -> str:
        later = [d for d in dirs if os.path.abspath(d) != os.path.abspath(os.path.dirname(path))]
        try:
            return read(os.path.basename(path), later, inner, **kwargs)
        except FileNotFoundError:
            return ""

    text = _ORIGINAL.sub(original, text)
    return _INCLUDE.sub(lambda m: read(m.group(1), dirs, inner, **kwargs), text)


_JSON_FENCED = re.compile(r"^\s*(```|~~~)\s*json\s*\n(.*?)\n\1\s*$", re.DOTALL)


def unfence_json(text: str) -> str:
    """A prompt that is wholly one ```json (or ~~~json) block, without its
    fences; any other text as it is (Agent Zero's Agent.read_prompt)."""
    m = _JSON_FENCED.fullmatch(text.strip())
    return m.group(2) if m else text
