"""What the stand-ins share within one ported plugin process: the plugin's
directory and name, the project directory, and the agent of the call running
now (set by the compatibility layer around every call)."""

from __future__ import annotations

import contextvars
import os
from dataclasses import dataclass, field
from typing import Any, List, Optional

from exocortex.log import Logger


@dataclass
class Runtime:
    # The ported plugin's directory (where main.py is): Agent Zero's base directory.
    plugin_dir: str
    # The plugin's name, e.g. "a0-mytree".
    plugin: str
    # The project the host runs in ($EXOCORTEX_PROJECT; the working directory without it).
    project_dir: str
    logger: Logger = field(default_factory=lambda: Logger("a0compat"))

    def roots(self) -> List[str]:
        """The directories the files stand-in may read and write: the plugin's
        own and the project's (declared in the manifest as data files)."""
        return [os.path.realpath(self.plugin_dir), os.path.realpath(self.project_dir)]


_runtime: List[Optional[Runtime]] = [None]
# The layer's Agent of the call running now (contextvars: asyncio tasks a file
# starts inherit it).
current_agent: "contextvars.ContextVar[Any]" = contextvars.ContextVar("a0_agent", default=None)


def configure(plugin_dir: str, plugin: str) -> Runtime:
    """Set the process's runtime (load_tree does, once per ported plugin)."""
    rt = Runtime(plugin_dir=os.path.abspath(plugin_dir), plugin=plugin,
                 project_dir=os.path.abspath(os.environ.get("EXOCORTEX_PROJECT") or os.getcwd()),
                 logger=Logger(plugin or "a0compat"))
    _runtime[0] = rt
    return rt


def get() -> Runtime:
    """The process's runtime; outside a ported plugin, one for the working directory."""
    rt = _runtime[0]
    if rt is None:
        rt = configure(os.getcwd(), "")
    return rt


def log(level: str, message: str) -> None:
    """Write message to the host's log: the running call's logger when a call
    runs, else the plugin's (stderr in the form the host parses)."""
    agent = current_agent.get()
    call = getattr(agent, "_call", None)
    logger = call.logger if call is not None else get().logger
    getattr(logger, level if level in ("debug", "info", "warn", "error") else "info")(message)
