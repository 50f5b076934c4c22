"""Agent Zero's helpers.print_style: PrintStyle, whose output goes to the
plugin's log (the host's log) instead of a terminal. Colours and padding are
accepted and dropped; error() and warning() log at those levels."""

from __future__ import annotations

from typing import Any

from exocortex.a0 import _runtime


class PrintStyle:
    def __init__(self, bold: bool = False, italic: bool = False, underline: bool = False,
                 font_color: str = "default", background_color: str = "default",
                 padding: bool = False, log_only: bool = False, **kwargs: Any) -> None:
        self.level = "info"

    def get(self, *args: Any, sep: str = " ", **kwargs: Any) -> str:
        return sep.join(str(a) for a in args)

    def print(self, *args: Any, sep: str = " ", **kwargs: Any) -> None:
        text = self.get(*args, sep=sep)
        if text:
            _runtime.log(self.level, text)

    def stream(self, *args: Any, sep: str = " ", **kwargs: Any) -> None:
        self.print(*args, sep=sep)

    def is_last_line_empty(self) -> bool:
        return True

    @staticmethod
    def _at(level: str, args: Any, sep: str) -> None:
        p = PrintStyle()
        p.level = level
        p.print(*args, sep=sep)

    @staticmethod
    def standard(*args: Any, sep: str = " ", **kwargs: Any) -> None:
        PrintStyle._at("info", args, sep)

    @staticmethod
    def hint(*args: Any, sep: str = " ", **kwargs: Any) -> None:
        PrintStyle._at("info", args, sep)

    @staticmethod
    def info(*args: Any, sep: str = " ", **kwargs: Any) -> None:
        PrintStyle._at("info", args, sep)

    @staticmethod
    def success(*args: Any, sep: str = " ", **kwargs: Any) -> None:
        PrintStyle._at("info", args, sep)

    @staticmethod
    def debug(*args: Any, sep: str = " ", **kwargs: Any) -> None:
        PrintStyle._at("debug", args, sep)

    @staticmethod
    def warning(*args: Any, sep: str = " ", **kwargs: Any) -> None:
        PrintStyle._at("warn", args, sep)

    @staticmethod
    def error(*args: Any, sep: str = " ", **kwargs: Any) -> None:
        PrintStyle._at("error", args, sep)
