"""Logging to the host.

A plugin's stderr is read by the host (go-plugin), which parses each line that is a
JSON object in hclog's shape ("@level", "@message", "@timestamp", then attributes)
and logs it at that level with those attributes; any other line is kept only at
debug level. Logger writes that shape, at info level and above, as Go's
sdk.NewHostLogHandler does:

    call.logger.info("counted", tool="shell", failures=2)
    {"@level":"info","@message":"counted","@timestamp":"...","@module":"failures",
     "extension":"failure_counter","hook":"tool_execute_after","tool":"shell","failures":2}

HostLogHandler is the same for the standard logging module; serve() installs it on
the root logger, so logging.getLogger(__name__).warning(...) reaches the host too.
"""

from __future__ import annotations

import datetime
import json
import logging
import sys
import threading
from typing import IO, Any, Dict, Optional

# The levels of hclog, by name, and the logging module's equivalents.
TRACE, DEBUG, INFO, WARN, ERROR = 5, logging.DEBUG, logging.INFO, logging.WARNING, logging.ERROR


def _level_name(level: int) -> str:
    if level < DEBUG:
        return "trace"
    if level < INFO:
        return "debug"
    if level < WARN:
        return "info"
    if level < ERROR:
        return "warn"
    return "error"


def _timestamp() -> str:
    # hclog's JSON time layout, which the host parses: microseconds, a zone.
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def format_record(level: int, message: str, attrs: Dict[str, Any]) -> str:
    """Return one log line (without newline) in the shape the host parses."""
    rec: Dict[str, Any] = {"@level": _level_name(level), "@message": message, "@timestamp": _timestamp()}
    for k, v in attrs.items():
        if k in ("@level", "@message", "@timestamp"):
            k = "_" + k[1:]
        rec[k] = v
    return json.dumps(rec, default=str, ensure_ascii=False, separators=(",", ":"))


class Logger:
    """A structured logger writing hclog JSON lines (stderr by default).

    Attributes are keyword arguments; with_attrs() returns a logger that adds some
    to every record. Records below the logger's level (info) are dropped. Safe for
    concurrent use."""

    def __init__(self, module: str = "", stream: Optional[IO[str]] = None, level: int = INFO,
                 _attrs: Optional[Dict[str, Any]] = None, _lock: Optional[Any] = None) -> None:
        self._stream = stream
        self._level = level
        self._attrs: Dict[str, Any] = dict(_attrs or {})
        if module and "@module" not in self._attrs:
            self._attrs = {"@module": module, **self._attrs}
        self._lock = _lock or threading.Lock()

    def with_attrs(self, **attrs: Any) -> "Logger":
        """Return a logger that adds attrs to every record."""
        return Logger(stream=self._stream, level=self._level, _attrs={**self._attrs, **attrs}, _lock=self._lock)

    def enabled(self, level: int) -> bool:
        return level >= self._level

    def log(self, level: int, message: str, **attrs: Any) -> None:
        if level < self._level:
            return
        line = format_record(level, message, {**self._attrs, **attrs}) + "\n"
        stream = self._stream or sys.__stderr__
        with self._lock:
            try:
                stream.write(line)
                stream.flush()
            except (OSError, ValueError):
                pass  # the host is gone; nothing to report to

    def debug(self, message: str, **attrs: Any) -> None:
        self.log(DEBUG, message, **attrs)

    def info(self, message: str, **attrs: Any) -> None:
        self.log(INFO, message, **attrs)

    def warn(self, message: str, **attrs: Any) -> None:
        self.log(WARN, message, **attrs)

    warning = warn

    def error(self, message: str, **attrs: Any) -> None:
        self.log(ERROR, message, **attrs)


class HostLogHandler(logging.Handler):
    """A logging.Handler writing records as hclog JSON lines through a Logger. The
    record's logger name becomes the "logger" attribute, an exception "error" and
    "stack"; the attributes of `extra=` pass through."""

    _STD = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None)).keys()) | {"message", "asctime"}

    def __init__(self, logger: Logger, level: int = INFO) -> None:
        super().__init__(level)
        self._logger = logger

    def emit(self, record: logging.LogRecord) -> None:
        try:
            attrs: Dict[str, Any] = {}
            if record.name and record.name != "root":
                attrs["logger"] = record.name
            for k, v in vars(record).items():
                if k not in self._STD and not k.startswith("_"):
                    attrs[k] = v
            if record.exc_info and record.exc_info[1] is not None:
                attrs["error"] = repr(record.exc_info[1])
                attrs["stack"] = self.formatException(record.exc_info)
            self._logger.log(record.levelno, record.getMessage(), **attrs)
        except Exception:  # a logging failure must not fail the call
            self.handleError(record)

    def formatException(self, exc_info) -> str:
        return logging.Formatter().formatException(exc_info)


class _StdoutToLog:
    """What sys.stdout becomes once the plugin has hand-shaken: print() goes to the
    host's log as info records ("stream": "stdout"), since stdout belongs to the
    handshake."""

    def __init__(self, logger: Logger) -> None:
        self._logger = logger.with_attrs(stream="stdout")
        self._buf = ""
        self._lock = threading.Lock()

    def write(self, s: str) -> int:
        with self._lock:
            self._buf += s
            *lines, self._buf = self._buf.split("\n")
        for line in lines:
            self._logger.info(line)
        return len(s)

    def flush(self) -> None:
        with self._lock:
            rest, self._buf = self._buf, ""
        if rest:
            self._logger.info(rest)

    def isatty(self) -> bool:
        return False

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:
        return "utf-8"
