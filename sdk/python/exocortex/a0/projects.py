"""Agent Zero's helpers.projects, onto Exocortex's project directory.

Agent Zero has named projects (usr/projects/<name>, its metadata in .a0proj/),
one of which a chat may activate (context data "project"). Exocortex runs every
session in one project directory ($EXOCORTEX_PROJECT), which is the agent's
working directory (helpers.settings' workdir_path). A ported file sees what
Agent Zero shows: no project is active until the context's "project" data names
one, and a project named after the project directory's base name is that
directory, its metadata read from its .a0proj/project.json as Agent Zero writes
it (defaults without one); any other name is <plugin dir>/usr/projects/<name>.

Creating, cloning, editing, deleting and (de)activating projects are the
operator's (the project is the directory the host runs in): those raise
NoCounterpart naming the call."""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Optional

from exocortex.a0 import _runtime, file_tree, files

PROJECTS_PARENT_DIR = "usr/projects"
PROJECT_META_DIR = ".a0proj"
PROJECT_INSTRUCTIONS_DIR = "instructions"
PROJECT_KNOWLEDGE_DIR = "knowledge"
PROJECT_HEADER_FILE = "project.json"
CONTEXT_DATA_KEY_PROJECT = "project"


class NoCounterpart(RuntimeError):
    """An Agent Zero call whose work belongs to the operator here."""


def _needs_a_hand(call: str) -> NoCounterpart:
    return NoCounterpart(
        f"a0compat: helpers.projects.{call} has no counterpart in a ported plugin: the project is the "
        "directory Exocortex runs in ($EXOCORTEX_PROJECT), chosen by the operator; read it with "
        "projects.get_project_folder(projects.exocortex_project_name())")


def exocortex_project_name() -> str:
    """The name of the host's project directory (its base name)."""
    return os.path.basename(_runtime.get().project_dir.rstrip(os.sep)) or "project"


def get_projects_parent_folder() -> str:
    return files.get_abs_path(PROJECTS_PARENT_DIR)


def get_project_folder(name: str) -> str:
    if name == exocortex_project_name():
        return _runtime.get().project_dir
    return files.get_abs_path(PROJECTS_PARENT_DIR, name)


def get_project_meta(name: str, *sub_dirs: str) -> str:
    return os.path.join(get_project_folder(name), PROJECT_META_DIR, *sub_dirs)


def _default_file_structure_settings() -> Dict[str, Any]:
    return {"enabled": True, "max_depth": 5, "max_files": 20, "max_folders": 20, "max_lines": 250,
            "gitignore": ".git/\n__pycache__/\nnode_modules/\n.venv/\n*.pyc\n"}


def load_project_header(name: str) -> Dict[str, Any]:
    path = get_project_meta(name, PROJECT_HEADER_FILE)
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as e:
        raise ValueError(f"a0compat: project {name!r}: reading {path}: {e}") from e
    if not isinstance(data, dict):
        raise ValueError(f"a0compat: project {name!r}: {path} is not a JSON object")
    return data


def load_basic_project_data(name: str) -> Dict[str, Any]:
    """The project's header with Agent Zero's defaults for what it lacks (the
    title is the name)."""
    data = load_project_header(name)
    fs = _default_file_structure_settings()
    fs.update(data.get("file_structure") or {})
    return {"title": data.get("title") or name, "description": data.get("description", ""),
            "instructions": data.get("instructions", ""), "color": data.get("color", ""),
            "git_url": data.get("git_url", ""), "memory": data.get("memory", "own"),
            "file_structure": fs}


def load_edit_project_data(name: str) -> Dict[str, Any]:
    out = load_basic_project_data(name)
    out["name"] = name
    out["instruction_files_count"] = len(get_additional_instructions_files(name))
    out["knowledge_files_count"] = get_knowledge_files_count(name)
    return out


def get_additional_instructions_files(name: str) -> Dict[str, str]:
    """The project's .a0proj/instructions/* text files by name."""
    folder = get_project_meta(name, PROJECT_INSTRUCTIONS_DIR)
    out: Dict[str, str] = {}
    if os.path.isdir(folder):
        for n in sorted(os.listdir(folder)):
            p = os.path.join(folder, n)
            if os.path.isfile(p):
                try:
                    with open(p, encoding="utf-8") as f:
                        out[n] = f.read()
                except (OSError, UnicodeDecodeError):
                    continue
    return out


def get_knowledge_files_count(name: str) -> int:
    folder = get_project_meta(name, PROJECT_KNOWLEDGE_DIR)
    return sum(len(fs) for _, _, fs in os.walk(folder)) if os.path.isdir(folder) else 0


def build_system_prompt_vars(name: str) -> Dict[str, str]:
    """The placeholders of agent.system.projects.active.md for the project."""
    data = load_basic_project_data(name)
    extra = get_additional_instructions_files(name)
    instructions = ((data.get("instructions") or "") + "\n\n".join(extra[k] for k in sorted(extra))).strip()
    return {"project_name": data.get("title", ""), "project_description": data.get("description", ""),
            "project_instructions": instructions, "project_path": files.normalize_a0_path(get_project_folder(name)),
            "project_git_url": data.get("git_url", "")}


def get_context_project_name(context: Any) -> Optional[str]:
    """The project the chat has active (its "project" data), None when none is."""
    return context.get_data(CONTEXT_DATA_KEY_PROJECT) if context is not None else None


def get_active_projects_list() -> List[Dict[str, Any]]:
    """The projects there are: the host's project directory."""
    name = exocortex_project_name()
    return [{"name": name, **load_basic_project_data(name)}]


def get_file_structure(name: str, basic_data: Optional[Dict[str, Any]] = None) -> str:
    """The project folder's tree, by the project's file_structure limits."""
    data = basic_data or load_basic_project_data(name)
    fs = data["file_structure"]
    tree = str(file_tree.file_tree(get_project_folder(name), max_depth=fs["max_depth"], max_files=fs["max_files"],
                                   max_folders=fs["max_folders"], max_lines=fs["max_lines"], ignore=fs["gitignore"],
                                   output_mode=file_tree.OUTPUT_MODE_STRING))
    return tree if "\n" in tree else tree + "\n # Empty"


def load_project_variables(name: str) -> str:
    try:
        with open(get_project_meta(name, "variables.env"), encoding="utf-8") as f:
            return f.read()
    except FileNotFoundError:
        return ""


def load_project_subagents(name: str) -> Dict[str, Any]:
    return {}


def _refuse(call: str):
    def f(*args: Any, **kwargs: Any) -> Any:
        raise _needs_a_hand(call)
    f.__name__ = call
    return f


create_project = _refuse("create_project")
clone_git_project = _refuse("clone_git_project")
update_project = _refuse("update_project")
delete_project = _refuse("delete_project")
save_project_header = _refuse("save_project_header")
activate_project = _refuse("activate_project")
deactivate_project = _refuse("deactivate_project")
reactivate_project_in_chats = _refuse("reactivate_project_in_chats")
deactivate_project_in_chats = _refuse("deactivate_project_in_chats")
save_project_variables = _refuse("save_project_variables")
save_project_subagents = _refuse("save_project_subagents")
save_project_secrets = _refuse("save_project_secrets")
create_project_meta_folders = _refuse("create_project_meta_folders")

__all__ = [n for n in dir() if not n.startswith("_") and n not in ("annotations", "json", "os", "Any", "Dict", "List",
                                                                    "Optional", "files", "file_tree")]
