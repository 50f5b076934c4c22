"""Agent Zero's helpers.dotenv: its settings kept as environment variables,
loaded from usr/.env. Here the plugin process's environment (the host's
PluginEnv, config.yaml's plugin settings) with the ported plugin's usr/.env,
when there is one, under it: get_dotenv_value reads a variable as Agent Zero's
does (os.getenv after load_dotenv). save_dotenv_value writes the plugin's
usr/.env and the process's environment, as Agent Zero's does for its own."""

from __future__ import annotations

import os
from typing import Any, Dict

from exocortex.a0 import _runtime

KEY_AUTH_LOGIN = "AUTH_LOGIN"
KEY_AUTH_PASSWORD = "AUTH_PASSWORD"
KEY_RFC_PASSWORD = "RFC_PASSWORD"
KEY_ROOT_PASSWORD = "ROOT_PASSWORD"


def get_dotenv_file_path() -> str:
    """The ported plugin's usr/.env (Agent Zero's usr/.env under its base)."""
    return os.path.join(_runtime.get().plugin_dir, "usr", ".env")


def _read(path: str) -> Dict[str, str]:
    out: Dict[str, str] = {}
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError:
        return out
    for line in lines:
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        k, v = line.split("=", 1)
        k = k.strip().removeprefix("export ").strip()
        v = v.strip()
        if len(v) >= 2 and v[0] == v[-1] and v[0] in "\"'":
            v = v[1:-1]
        out[k] = v
    return out


def load_dotenv() -> None:
    """Puts the variables of usr/.env into the environment, under those set."""
    for k, v in _read(get_dotenv_file_path()).items():
        os.environ.setdefault(k, v)


def get_dotenv_value(key: str, default: Any = None) -> Any:
    load_dotenv()
    return os.getenv(key, default)


def save_dotenv_value(key: str, value: str) -> None:
    p = get_dotenv_file_path()
    vals = _read(p)
    vals[key] = "" if value is None else str(value)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "w", encoding="utf-8") as f:
        for k, v in vals.items():
            f.write(f"{k}={v}\n")
    os.environ[key] = vals[key]
