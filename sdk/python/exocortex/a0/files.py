"""Agent Zero's helpers.files, on the ported plugin's directory (Agent Zero's
base directory: a relative path starts there) and the project's.

Those two roots are what the layer declares in the plugin's manifest as its
data files (ids a0_<plugin>_files and a0_<plugin>_project); a path outside them
is refused with PermissionError naming the path and the roots, as the host
would not know the file is touched. read_file replaces {{name}} with its
keyword arguments, as Agent Zero's does."""

from __future__ import annotations

import fnmatch
import glob
import os
import re
from typing import Any, Dict, List, Optional

from exocortex.a0 import _runtime

_VAR = re.compile(r"\{\{\s*(\w+)\s*\}\}")


def get_base_dir() -> str:
    return _runtime.get().plugin_dir


def get_abs_path(*relative_paths: str) -> str:
    """The path joined onto the plugin's directory (an absolute part starts anew)."""
    return os.path.join(get_base_dir(), *[str(p) for p in relative_paths])


def fix_dev_path(path: str) -> str:
    return get_abs_path(path)


def get_abs_path_development(*relative_paths: str) -> str:
    """Agent Zero's path on the development host: the same path here, as the
    plugin runs where its files are (no docker runtime beside it)."""
    return get_abs_path(*relative_paths)


def normalize_a0_path(path: str) -> str:
    """Agent Zero's mapping between its docker (/a0/...) and development paths:
    the path as it is here, where there is one file system."""
    return str(path)


def _allowed(*relative_paths: str) -> str:
    path = os.path.realpath(get_abs_path(*relative_paths))
    roots = _runtime.get().roots()
    for root in roots:
        if path == root or path.startswith(root.rstrip(os.sep) + os.sep):
            return path
    raise PermissionError(
        f"a0compat: {path} is outside the files this ported plugin declares ({' and '.join(roots)}): "
        "keep the file in the plugin's directory or the project")


def exists(*relative_paths: str) -> bool:
    try:
        return os.path.exists(_allowed(*relative_paths))
    except PermissionError:
        return False


def is_in_dir(file: str, directory: str) -> bool:
    f, d = os.path.realpath(get_abs_path(file)), os.path.realpath(get_abs_path(directory))
    return f == d or f.startswith(d.rstrip(os.sep) + os.sep)


def deabsolute_path(path: str) -> str:
    return os.path.relpath(os.path.abspath(path), get_base_dir())


def read_file(relative_path: str, backup_dirs: Optional[List[str]] = None, encoding: str = "utf-8",
              **kwargs: Any) -> str:
    paths = [relative_path] + [os.path.join(d, os.path.basename(relative_path)) for d in backup_dirs or []]
    for p in paths:
        path = _allowed(p)
        if os.path.isfile(path):
            with open(path, encoding=encoding) as f:
                text = f.read()
            return _VAR.sub(lambda m: str(kwargs[m.group(1)]) if m.group(1) in kwargs else m.group(0), text)
    raise FileNotFoundError(f"a0compat: {get_abs_path(relative_path)} does not exist")


def read_file_bin(relative_path: str) -> bytes:
    with open(_allowed(relative_path), "rb") as f:
        return f.read()


def write_file(relative_path: str, content: str, encoding: str = "utf-8") -> None:
    path = _allowed(relative_path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding=encoding) as f:
        f.write(content)


def write_file_bin(relative_path: str, content: bytes) -> None:
    path = _allowed(relative_path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(content)


def delete_file(relative_path: str) -> None:
    path = _allowed(relative_path)
    if os.path.isfile(path):
        os.remove(path)


def make_dirs(relative_path: str) -> None:
    os.makedirs(_allowed(relative_path), exist_ok=True)


def create_dir(relative_path: str) -> None:
    """Agent Zero's create_dir: make_dirs."""
    make_dirs(relative_path)


def list_files(relative_path: str, filter: str = "*") -> List[str]:
    path = _allowed(relative_path)
    if not os.path.isdir(path):
        return []
    return sorted(n for n in os.listdir(path) if fnmatch.fnmatch(n, filter))


def get_unique_filenames_in_dirs(dir_paths: List[str], pattern: str = "*") -> List[str]:
    """The files matching pattern in the directories, the first of a name winning."""
    seen, out = set(), []
    for d in dir_paths:
        for p in sorted(glob.glob(os.path.join(_allowed(d), pattern))):
            name = os.path.basename(p)
            if os.path.isfile(p) and name not in seen:
                seen.add(name)
                out.append(p)
    return out


def basename(path: str, suffix: Optional[str] = None) -> str:
    b = os.path.basename(path)
    return b[: -len(suffix)] if suffix and b.endswith(suffix) else b


def dirname(path: str) -> str:
    return os.path.dirname(path)


class VariablesPlugin:
    """Agent Zero's base class of a prompt variables file (NAME.py beside
    NAME.md): get_variables returns the placeholders' values
    (exocortex.a0.prompts reads prompt files with them)."""

    def get_variables(self, file: str, backup_dirs: Optional[List[str]] = None, **kwargs: Any) -> Dict[str, Any]:
        return {}


def read_prompt_file(file: str, _directories: Optional[List[str]] = None, **kwargs: Any) -> str:
    """Agent Zero's read_prompt_file: the prompt file with its variables file,
    conditions, placeholders and includes (exocortex.a0.prompts)."""
    from exocortex.a0 import prompts
    return prompts.read(file, list(_directories or []), **kwargs)
