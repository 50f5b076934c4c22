"""Agent Zero's helpers.file_tree: a directory drawn as a tree for a prompt
(`├── name`, `└── folder/`, `# N more files`), within limits of depth, entries
per folder and lines, leaving out what .gitignore-style patterns match.

The patterns are read by a small matcher of the standard library (`*`, `**`,
`?`, a leading `/` anchoring to the root, a trailing `/` for folders, `!` to
keep again), not by the pathspec package Agent Zero uses."""

from __future__ import annotations

import os
import re
from typing import Any, Dict, List, Optional, Tuple

from exocortex.a0 import files

SORT_BY_NAME = "name"
SORT_BY_CREATED = "created"
SORT_BY_MODIFIED = "modified"
SORT_ASC = "asc"
SORT_DESC = "desc"
OUTPUT_MODE_STRING = "string"
OUTPUT_MODE_FLAT = "flat"
OUTPUT_MODE_NESTED = "nested"


def _pattern(pat: str) -> "re.Pattern[str]":
    """A .gitignore pattern as a regular expression over a path relative to the
    root: `**/` any folders (none too), a trailing `/**` everything inside, `**`
    anything, `*` and `?` within one name, `[...]` a class."""
    out, i = "", 0
    while i < len(pat):
        if pat.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif pat.startswith("/**", i) and i + 3 == len(pat):
            out, i = out + "(?:/.*)?", i + 3
        elif pat.startswith("**", i):
            out, i = out + ".*", i + 2
        elif pat[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif pat[i] == "?":
            out, i = out + "[^/]", i + 1
        elif pat[i] == "[" and pat.find("]", i) > i:
            j = pat.find("]", i)
            out, i = out + pat[i:j + 1], j + 1
        else:
            out, i = out + re.escape(pat[i]), i + 1
    return re.compile(out + r"\Z")


class _Ignore:
    def __init__(self, text: str) -> None:
        self.rules: List[Tuple[bool, bool, bool, "re.Pattern[str]"]] = []
        for raw in text.splitlines():
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            keep = line.startswith("!")
            line = line[1:] if keep else line
            folder = line.endswith("/")
            line = line.rstrip("/")
            anchored = line.startswith("/") or "/" in line
            self.rules.append((keep, folder, anchored, _pattern(line.lstrip("/"))))

    def ignored(self, rel: str, is_dir: bool) -> bool:
        out = False
        name = rel.rsplit("/", 1)[-1]
        for keep, folder, anchored, rx in self.rules:
            if folder and not is_dir:
                continue
            if rx.match(rel if anchored else name):
                out = not keep
        return out


def _ignore_text(ignore: Optional[str], root: str) -> str:
    if not ignore:
        return ""
    if ignore.startswith("file:"):
        ref = ignore[len("file:"):]
        ref = ref[2:] if ref.startswith("//") else ref
        path = ref if os.path.isabs(ref) else os.path.join(root, ref)
        try:
            with open(path, encoding="utf-8") as f:
                return f.read()
        except OSError:
            return ""
    return ignore


def file_tree(relative_path: str, *, max_depth: int = 0, max_lines: int = 0, folders_first: bool = True,
              max_folders: int = 0, max_files: int = 0, sort: Tuple[str, str] = (SORT_BY_MODIFIED, SORT_DESC),
              ignore: Optional[str] = None, output_mode: str = OUTPUT_MODE_STRING) -> Any:
    """The tree of relative_path (a path of helpers.files: the plugin's
    directory or the project). max_depth, max_lines, max_folders, max_files: 0
    is no limit; a folder's entries past a cap become one `# N more files`
    (or folders) line, one excess entry is drawn rather than summed up. The
    root line is the folder's own path. output_mode "flat": the entries as
    dicts in drawing order (name, level, type, text); "nested": dicts with items."""
    root = files.get_abs_path(relative_path)
    if not os.path.isdir(root):
        raise FileNotFoundError(f"a0compat: file_tree: {root} is not a folder")
    rules = _Ignore(_ignore_text(ignore, root))
    key_name, direction = (sort + (SORT_DESC,))[:2] if isinstance(sort, tuple) else (SORT_BY_MODIFIED, SORT_DESC)

    def sort_key(e: "os.DirEntry[str]") -> Any:
        if key_name == SORT_BY_NAME:
            return e.name.lower()
        st = e.stat(follow_symlinks=False)
        return st.st_ctime if key_name == SORT_BY_CREATED else st.st_mtime

    def children(path: str, rel: str, level: int) -> List[Dict[str, Any]]:
        try:
            entries = list(os.scandir(path))
        except OSError:
            return []
        dirs, plain = [], []
        for e in entries:
            is_dir = e.is_dir(follow_symlinks=False)
            r = f"{rel}/{e.name}" if rel else e.name
            if not rules.ignored(r, is_dir):
                (dirs if is_dir else plain).append(e)
        out: List[Dict[str, Any]] = []
        groups = [(dirs, max_folders, "folder"), (plain, max_files, "file")]
        if not folders_first:
            groups = [(dirs + plain, 0, "")]
        for group, cap, noun in groups:
            group.sort(key=sort_key, reverse=(direction == SORT_DESC))
            shown = group if not cap or len(group) <= cap + 1 else group[:cap]
            for e in shown:
                is_dir = e.is_dir(follow_symlinks=False)
                r = f"{rel}/{e.name}" if rel else e.name
                node = {"name": e.name, "level": level, "type": "folder" if is_dir else "file", "items": None}
                if is_dir and (not max_depth or level < max_depth):
                    node["items"] = children(e.path, r, level + 1)
                out.append(node)
            if len(shown) < len(group):
                n = len(group) - len(shown)
                out.append({"name": f"{n} more {noun if n == 1 else noun + 's'}", "level": level,
                            "type": "comment", "items": None})
        return out

    tree = children(root, "", 1)
    lines: List[str] = [f"{root.rstrip(os.sep)}/"]
    flat: List[Dict[str, Any]] = []

    def draw(nodes: List[Dict[str, Any]], prefix: str) -> None:
        for i, n in enumerate(nodes):
            last = i == len(nodes) - 1
            label = n["name"] + "/" if n["type"] == "folder" else ("# " + n["name"] if n["type"] == "comment" else n["name"])
            text = prefix + ("└── " if last else "├── ") + label
            if max_lines and len(lines) >= max_lines:
                lines.append(prefix + "# more entries, past the line limit")
                return
            lines.append(text)
            flat.append({"name": n["name"], "level": n["level"], "type": n["type"], "text": text})
            if n["items"]:
                draw(n["items"], prefix + ("    " if last else "│   "))

    draw(tree, "")
    if output_mode == OUTPUT_MODE_FLAT:
        return flat
    if output_mode == OUTPUT_MODE_NESTED:
        return tree
    return "\n".join(lines)


__all__ = ["file_tree", "SORT_BY_NAME", "SORT_BY_CREATED", "SORT_BY_MODIFIED", "SORT_ASC", "SORT_DESC",
           "OUTPUT_MODE_STRING", "OUTPUT_MODE_FLAT", "OUTPUT_MODE_NESTED"]
