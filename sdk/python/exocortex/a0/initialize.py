"""Agent Zero's initialize module, as far as extensions call it:
initialize_agent builds the agent's configuration from Agent Zero's settings
(with a profile's overrides). Exocortex's agent is configured by the operator
(config.yaml, --profile) and built by the host, so a ported plugin cannot build
one: initialize_agent raises NoCounterpart naming what to do."""

from __future__ import annotations

from typing import Any


class NoCounterpart(RuntimeError):
    """An Agent Zero call whose work belongs to the host here."""


def initialize_agent(override_settings: Any = None) -> Any:
    keys = ", ".join(sorted(override_settings)) if isinstance(override_settings, dict) else ""
    raise NoCounterpart(
        "a0compat: initialize.initialize_agent has no counterpart in a ported plugin: the agent's configuration "
        "is the operator's (config.yaml; a profile's settings with --profile)"
        + (f"; the overrides asked for ({keys}) go there" if keys else ""))


__all__ = ["initialize_agent", "NoCounterpart"]
