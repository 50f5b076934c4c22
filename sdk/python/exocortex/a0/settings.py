"""Agent Zero's helpers.settings: a read-only view of the session's settings.

The settings are Exocortex's (config.yaml with the environment over it), as the
host shows them to its plugins (config.PluginSettings: EXOCORTEX_SETTINGS),
with the running call's model and agent profile, under Agent Zero's names where
one means the same (chat_model_name, util_model_name, embed_model_name,
chat_model_ctx_length, agent_profile) and under Exocortex's own names
(exocortex_model, exocortex_num_ctx, ...). A name with no counterpart is absent:
settings.get(name, default) gives the default, as for an Agent Zero setting not
set.

Nothing here writes: the operator changes Exocortex's settings in config.yaml.
Setting an item, set_settings and set_settings_delta raise SettingsReadOnly
naming the call."""

from __future__ import annotations

from typing import Any, Dict, Iterator, Mapping, Optional

from exocortex.a0 import _host, _runtime


class SettingsReadOnly(RuntimeError):
    """A write to the settings, which only the operator changes (config.yaml)."""


def _refuse(what: str) -> SettingsReadOnly:
    return SettingsReadOnly(
        f"a0compat: helpers.settings.{what}: Exocortex's settings are read-only for a plugin: the operator sets "
        "them in config.yaml (or the environment) and restarts; keep a plugin's own values with "
        "helpers.plugins.save_plugin_config or agent.set_data")


class Settings(Mapping):
    """The settings, read-only: a Mapping (get, [], in, keys, items) whose
    writes raise SettingsReadOnly."""

    def __init__(self, values: Dict[str, Any]) -> None:
        self._values = values

    def __getitem__(self, key: str) -> Any:
        try:
            return self._values[key]
        except KeyError:
            raise KeyError(f"a0compat: setting {key!r} has no counterpart in Exocortex's settings "
                           f"(there are: {', '.join(sorted(self._values))}); use settings.get({key!r}, default)") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"Settings({self._values!r})"

    def copy(self) -> Dict[str, Any]:
        """A plain dict of the settings, which the caller may change (nothing is saved)."""
        return dict(self._values)

    def __setitem__(self, key: str, value: Any) -> None:
        raise _refuse(f"get_settings()[{key!r}] = ...")

    def __delitem__(self, key: str) -> None:
        raise _refuse(f"del get_settings()[{key!r}]")

    def update(self, *args: Any, **kwargs: Any) -> None:
        raise _refuse("get_settings().update(...)")

    def setdefault(self, key: str, default: Any = None) -> Any:
        raise _refuse(f"get_settings().setdefault({key!r}, ...)")

    def pop(self, key: str, *default: Any) -> Any:
        raise _refuse(f"get_settings().pop({key!r})")


def _values() -> Dict[str, Any]:
    s = _host.settings()
    model = _host.model()
    provider = str(s.get("provider") or "")
    embedder = str(s.get("embedder") or "")
    embed_provider, _, embed_name = embedder.partition(":") if ":" in embedder else ("", "", embedder)
    out: Dict[str, Any] = {
        "chat_model_provider": provider,
        "chat_model_name": model,
        "chat_model_ctx_length": _host.num_ctx(),
        "util_model_provider": provider,
        "util_model_name": str(s.get("utility_model") or ""),
        "embed_model_provider": embed_provider,
        "embed_model_name": embed_name,
        "agent_profile": _host.agent_profile() or "default",
        "timezone": _local_timezone(),
        # Agent Zero's working directory is the project Exocortex runs in; its
        # file-structure prompt's limits are Agent Zero's defaults.
        "workdir_path": _runtime.get().project_dir,
        "workdir_show": True,
        "workdir_max_depth": 5,
        "workdir_max_files": 20,
        "workdir_max_folders": 20,
        "workdir_max_lines": 250,
        "workdir_gitignore": ".git/\n__pycache__/\nnode_modules/\n.venv/\n*.pyc\n",
    }
    for k, v in s.items():
        if k == "tools":  # the built-in tools' own settings (toolsettings), not the session's
            continue
        out[f"exocortex_{k}"] = v
    return out


def _local_timezone() -> str:
    from exocortex.a0.localization import Localization
    return Localization.get().get_timezone()


def get_settings() -> Settings:
    """The session's settings now (read at every call: the running call's model)."""
    return Settings(_values())


def get_settings_for_prompt() -> Settings:
    return get_settings()


def reload_settings() -> Settings:
    return get_settings()


def get_default_settings() -> Settings:
    return get_settings()


def set_settings(settings: Any, apply: bool = True, browser_timezone: Optional[str] = None) -> None:
    raise _refuse("set_settings")


def set_settings_delta(delta: Any, apply: bool = True) -> None:
    raise _refuse("set_settings_delta")


def get_default_value(name: str, value: Any) -> Any:
    """The setting name if Exocortex has it, else value."""
    return _values().get(name, value)


__all__ = ["Settings", "SettingsReadOnly", "get_settings", "get_settings_for_prompt", "reload_settings",
           "get_default_settings", "set_settings", "set_settings_delta", "get_default_value"]
