"""Agent Zero's helpers.runtime: where the agent runs. Agent Zero splits a
development host from its docker runtime, calling into the runtime over RFC;
a ported plugin runs where its files are, so call_development_function calls
the function here, and paths need no mapping (files.normalize_a0_path)."""

from __future__ import annotations

import asyncio
import os
import platform
import sys
from typing import Any, Callable

from exocortex.a0 import _host, _runtime


def initialize() -> None:
    """Nothing to do: the host starts the plugin with its arguments and environment."""


def get_arg(name: str) -> Any:
    """Agent Zero's command-line arguments: the ported plugin has none of its own."""
    return None


def has_arg(name: str) -> bool:
    return False


def is_dockerized() -> bool:
    """False: the plugin runs as a process of the host, not in Agent Zero's container."""
    return False


def is_development() -> bool:
    """True, as Agent Zero says outside its container (not dockerized)."""
    return not is_dockerized()


def get_local_url() -> str:
    return "127.0.0.1"


def get_runtime_id() -> str:
    """The id of this run: the plugin process's (changes on restart and hot reload)."""
    return f"{_runtime.get().plugin or 'a0'}-{os.getpid()}"


def get_persistent_id() -> str:
    """An id that outlives restarts: the session's (Agent Zero keeps one per installation)."""
    return _host.session_id() or get_runtime_id()


async def call_development_function(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """func called here (awaited when it is a coroutine function): there is no
    separate runtime to call into."""
    out = func(*args, **kwargs)
    if asyncio.iscoroutine(out):
        out = await out
    return out


def call_development_function_sync(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    out = func(*args, **kwargs)
    if asyncio.iscoroutine(out):
        out = asyncio.run(out)
    return out


def get_platform() -> str:
    return sys.platform


def is_windows() -> bool:
    return sys.platform.startswith("win")


def get_terminal_executable() -> str:
    return "powershell.exe" if is_windows() else "/bin/bash"


def get_machine() -> str:
    return platform.machine()


__all__ = ["initialize", "get_arg", "has_arg", "is_dockerized", "is_development", "get_local_url",
           "get_runtime_id", "get_persistent_id", "call_development_function",
           "call_development_function_sync", "get_platform", "is_windows", "get_terminal_executable"]
