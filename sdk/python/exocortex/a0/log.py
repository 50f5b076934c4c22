"""Agent Zero's helpers.log: Log and LogItem, on the plugin's log (the host's
log); the item keeps its key-value pairs (kvps) as Agent Zero's does."""

from __future__ import annotations

from typing import Any, Dict

from exocortex.a0 import _runtime


class LogItem:
    def __init__(self, type: str = "info", heading: str = "", content: str = "", **kwargs: Any) -> None:
        self.type, self.heading, self.content = type, heading, content
        self.kvps: Dict[str, Any] = {}
        self._write(type, heading, content, kwargs)

    def _write(self, type: str, heading: str, content: str, kwargs: Dict[str, Any]) -> None:
        kvps = kwargs.pop("kvps", None)
        if isinstance(kvps, dict):
            self.kvps.update(kvps)
        self.kvps.update({k: v for k, v in kwargs.items() if k != "update_progress"})
        msg = " ".join(str(s) for s in (heading, content) if s)
        if msg:
            _runtime.log("warn" if type == "warning" else "error" if type == "error" else "info", f"[{type}] {msg}")

    def update(self, type: str = "", heading: str = "", content: str = "", **kwargs: Any) -> None:
        self._write(type or self.type, heading, content, kwargs)

    def stream(self, heading: str = "", content: str = "", **kwargs: Any) -> None:
        self._write(self.type, heading, content, kwargs)


class Log:
    def log(self, type: str = "info", heading: str = "", content: str = "", **kwargs: Any) -> LogItem:
        return LogItem(type, heading, content, **kwargs)
