"""Agent Zero's helpers.secrets: the placeholders §§secret(NAME) the model sees
instead of secret values, put back into tool arguments and masked out of what
the model and the operator see.

The secrets come from the environment (A0_SECRET_<NAME>=value: the secret
NAME) and from secrets.env in the ported plugin's directory (NAME=value lines,
Agent Zero's usr/secrets.env format; the environment wins). Values are never
logged: the manager's repr and every error name the keys only."""

from __future__ import annotations

import os
import re
from typing import Any, Dict, List, Optional

from exocortex.a0 import _runtime
from exocortex.a0.errors import RepairableException

ENV_PREFIX = "A0_SECRET_"
SECRETS_FILE = "secrets.env"
_PLACEHOLDER = re.compile(r"§§secret\(([A-Za-z_][A-Za-z0-9_]*)\)")


def alias_for_key(key: str, placeholder: str = "§§secret({key})") -> str:
    return placeholder.format(key=key.upper())


def _read_env_file(path: str) -> Dict[str, str]:
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
        k = k.strip()
        if k.startswith("export "):
            k = k[7:].strip()
        v = v.strip()
        if len(v) >= 2 and v[0] == v[-1] and v[0] in "\"'":
            v = v[1:-1]
        if k:
            out[k.upper()] = v
    return out


class StreamingSecretsFilter:
    """Masks secret values in a stream of chunks: the end of what it has seen that
    could still be the start of a secret is held back until the next chunk
    (finalize() gives the rest)."""

    def __init__(self, manager: "SecretsManager") -> None:
        self._m = manager
        self._held = ""

    def process_chunk(self, chunk: str) -> str:
        text = self._m.mask_values(self._held + (chunk or ""))
        hold = 0
        for v in self._m._values():
            for n in range(min(len(v) - 1, len(text)), 0, -1):
                if text.endswith(v[:n]):
                    hold = max(hold, n)
                    break
        self._held = text[len(text) - hold:] if hold else ""
        return text[:len(text) - hold] if hold else text

    def finalize(self) -> str:
        rest, self._held = self._held, ""
        return self._m.mask_values(rest)


class SecretsManager:
    def __init__(self, secrets: Dict[str, str]) -> None:
        self._secrets = secrets

    def __repr__(self) -> str:
        return f"SecretsManager(keys={sorted(self._secrets)})"

    def _values(self) -> List[str]:
        return sorted((v for v in self._secrets.values() if v), key=len, reverse=True)

    def load_secrets(self) -> Dict[str, str]:
        return dict(self._secrets)

    def get_keys(self) -> List[str]:
        return sorted(self._secrets)

    def get_secrets_for_prompt(self) -> str:
        return "\n".join(alias_for_key(k) for k in self.get_keys())

    def replace_placeholders(self, text: str) -> str:
        """text with every §§secret(NAME) replaced by the secret's value; a name
        with no secret raises RepairableException naming it and where to set it."""
        def value(m: "re.Match[str]") -> str:
            k = m.group(1).upper()
            if k not in self._secrets:
                raise RepairableException(
                    f"secret placeholder {m.group(0)} has no value: set {ENV_PREFIX}{k} in the "
                    f"environment or {k}= in the plugin's {SECRETS_FILE}")
            return self._secrets[k]
        return _PLACEHOLDER.sub(value, text) if isinstance(text, str) else text

    def mask_values(self, text: str, min_length: int = 4, placeholder: str = "§§secret({key})") -> str:
        """text with every secret value (of at least min_length characters)
        replaced by its placeholder, longest first."""
        if not isinstance(text, str):
            return text
        for k, v in sorted(self._secrets.items(), key=lambda kv: len(kv[1]), reverse=True):
            if v and len(v) >= min_length:
                text = text.replace(v, alias_for_key(k, placeholder))
        return text

    def create_streaming_filter(self) -> StreamingSecretsFilter:
        return StreamingSecretsFilter(self)


def get_secrets_manager(context: Any = None) -> SecretsManager:
    """The secrets of the ported plugin (the environment over its secrets.env),
    read now, so a changed secret is seen at the next call."""
    secrets = _read_env_file(os.path.join(_runtime.get().plugin_dir, SECRETS_FILE))
    for k, v in os.environ.items():
        if k.startswith(ENV_PREFIX) and len(k) > len(ENV_PREFIX):
            secrets[k[len(ENV_PREFIX):].upper()] = v
    return SecretsManager(secrets)


def get_default_secrets_manager() -> SecretsManager:
    return get_secrets_manager(None)
