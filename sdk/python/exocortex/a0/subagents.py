"""Agent Zero's helpers.subagents, for what extensions ask of it: the
directories to look for an agent's files in (get_paths), which here are the
ported plugin's own (prompts/, tools/, ...: `plugins port` copies the tree's
prompt files into prompts/), and the running agent's profile.

Agent profiles are Exocortex's (`--profile`; RunSubordinate's profile): a
ported plugin cannot list, load, save or delete them; those functions raise
NoCounterpart naming the call."""

from __future__ import annotations

import os
from typing import Any, Dict, List, Optional

from exocortex.a0 import _host, _runtime


class NoCounterpart(RuntimeError):
    """An Agent Zero call whose work belongs to the host here."""


def _needs_a_hand(call: str) -> NoCounterpart:
    return NoCounterpart(
        f"a0compat: helpers.subagents.{call} has no counterpart in a ported plugin: agent profiles are "
        "Exocortex's (the host's --profile; a subordinate's through RunSubordinate); the running profile is "
        "subagents.get_current_profile()")


def get_paths(agent: Any, *subpaths: str, must_exist_completely: bool = True, include_project: bool = True,
              include_user: bool = True, include_default: bool = True, include_plugins: bool = True,
              default_root: str = "", **kwargs: Any) -> List[str]:
    """The paths of subpaths in the ported plugin's directory (Agent Zero's
    agent, user, project and plugin directories are all the ported plugin
    here), then in the project's when include_project; with
    must_exist_completely only those that exist."""
    rt = _runtime.get()
    roots = [rt.plugin_dir] + ([rt.project_dir] if include_project else [])
    out: List[str] = []
    for root in roots:
        p = os.path.join(root, *subpaths)
        if (not must_exist_completely or os.path.exists(p)) and p not in out:
            out.append(p)
    return out


def get_current_profile(agent: Any = None) -> str:
    """The agent profile of the running call ("default" when the host names none)."""
    return _host.agent_profile() or "default"


def get_agents_roots() -> List[str]:
    return get_paths(None, "agents")


def get_agents_list(project_name: Optional[str] = None) -> List[Any]:
    raise _needs_a_hand("get_agents_list")


def get_agents_dict(project_name: Optional[str] = None) -> Dict[str, Any]:
    raise _needs_a_hand("get_agents_dict")


def get_available_agents_dict(project_name: Optional[str] = None) -> Dict[str, Any]:
    raise _needs_a_hand("get_available_agents_dict")


def get_all_agents_list() -> List[Dict[str, str]]:
    raise _needs_a_hand("get_all_agents_list")


def load_agent_data(name: str, project_name: Optional[str] = None) -> Any:
    raise _needs_a_hand(f"load_agent_data({name!r})")


def save_agent_data(name: str, subagent: Any) -> None:
    raise _needs_a_hand(f"save_agent_data({name!r})")


def delete_agent_data(name: str) -> None:
    raise _needs_a_hand(f"delete_agent_data({name!r})")
