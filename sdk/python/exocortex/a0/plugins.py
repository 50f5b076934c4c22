"""Agent Zero's helpers.plugins, for the one thing extensions ask of it: a
plugin's configuration. get_plugin_config(name) is the ported plugin's own
config/<name>.json: `plugins port` writes it from the tree's
plugins/<name>/default_config.yaml with its config.json over it; the operator
edits it there. A plugin with no such file has no configuration (None), as an
Agent Zero plugin that is not installed."""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Optional

from exocortex.a0 import _runtime

CONFIG_DIR = "config"


def _path(plugin_name: str) -> str:
    return os.path.join(_runtime.get().plugin_dir, CONFIG_DIR, f"{plugin_name}.json")


def get_plugin_config(plugin_name: str, agent: Any = None, project_name: Optional[str] = None,
                      agent_profile: Optional[str] = None, **kwargs: Any) -> Optional[Dict[str, Any]]:
    path = _path(plugin_name)
    try:
        with open(path, encoding="utf-8") as f:
            cfg = json.load(f)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        raise ValueError(f"a0compat: the configuration of plugin {plugin_name!r} in {path} cannot be read: "
                         f"{e}; fix the file (a JSON object) or port the tree again") from e
    if not isinstance(cfg, dict):
        raise ValueError(f"a0compat: the configuration of plugin {plugin_name!r} in {path} is not a JSON object")
    return cfg


def get_default_plugin_config(plugin_name: str) -> Optional[Dict[str, Any]]:
    return get_plugin_config(plugin_name)


def save_plugin_config(plugin_name: str, project_name: str = "", agent_profile: str = "",
                       settings: Optional[Dict[str, Any]] = None, **kwargs: Any) -> None:
    path = _path(plugin_name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(settings or {}, f, indent=1, sort_keys=True)
    os.replace(tmp, path)


def find_plugin_dir(plugin_name: str) -> str:
    """The ported plugin's directory (a ported tree is one plugin here)."""
    return _runtime.get().plugin_dir
