"""Agent Zero's helpers.dirty_json: lenient JSON, as models write it, parsed with
the standard library only.

Accepted beyond JSON: text around the first object or array (a ```json fence, a
sentence before it), single-quoted strings, unquoted keys and words, trailing
commas, // and /* */ comments, Python's True/False/None, and a value cut off at
the end of the text (what is there is kept, open strings, arrays and objects
closed), as a streamed reply leaves it."""

from __future__ import annotations

import json
from typing import Any, List

_LITERALS = {"true": True, "false": False, "null": None, "True": True, "False": False,
             "None": None, "undefined": None}
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "/": "/", "\\": "\\", '"': '"', "'": "'"}


class DirtyJson:
    def __init__(self) -> None:
        self.s = ""
        self.i = 0

    @staticmethod
    def parse_string(text: str) -> Any:
        """The first JSON value in text, leniently (see the module)."""
        return DirtyJson().parse(text)

    def parse(self, text: str) -> Any:
        s = text.strip()
        start = min((p for p in (s.find("{"), s.find("[")) if p >= 0), default=-1)
        if start > 0:
            s = s[start:]
        self.s, self.i = s, 0
        self._ws()
        if self.i >= len(self.s):
            return None
        return self._value()

    def _ws(self) -> None:
        s, n = self.s, len(self.s)
        while self.i < n:
            c = s[self.i]
            if c.isspace():
                self.i += 1
            elif s.startswith("//", self.i):
                j = s.find("\n", self.i)
                self.i = n if j < 0 else j + 1
            elif s.startswith("/*", self.i):
                j = s.find("*/", self.i + 2)
                self.i = n if j < 0 else j + 2
            else:
                return

    def _value(self) -> Any:
        self._ws()
        if self.i >= len(self.s):
            return None
        c = self.s[self.i]
        if c == "{":
            return self._object()
        if c == "[":
            return self._array()
        if c in "\"'`":
            return self._string(c)
        return self._word()

    def _object(self) -> dict:
        out: dict = {}
        self.i += 1
        while True:
            self._ws()
            if self.i >= len(self.s):
                return out
            c = self.s[self.i]
            if c == "}":
                self.i += 1
                return out
            if c == ",":
                self.i += 1
                continue
            key = self._string(c) if c in "\"'`" else self._bare_key()
            self._ws()
            if self.i < len(self.s) and self.s[self.i] in ":=":
                self.i += 1
            out[str(key)] = self._value()

    def _array(self) -> List[Any]:
        out: List[Any] = []
        self.i += 1
        while True:
            self._ws()
            if self.i >= len(self.s):
                return out
            c = self.s[self.i]
            if c == "]":
                self.i += 1
                return out
            if c == ",":
                self.i += 1
                continue
            before = self.i
            out.append(self._value())
            if self.i == before:  # a stray character: skip it
                self.i += 1

    def _string(self, quote: str) -> str:
        self.i += 1
        buf: List[str] = []
        s, n = self.s, len(self.s)
        while self.i < n:
            c = s[self.i]
            if c == quote:
                self.i += 1
                return "".join(buf)
            if c == "\\" and self.i + 1 < n:
                e = s[self.i + 1]
                if e == "u" and self.i + 6 <= n:
                    try:
                        buf.append(chr(int(s[self.i + 2:self.i + 6], 16)))
                        self.i += 6
                        continue
                    except ValueError:
                        pass
                buf.append(_ESCAPES.get(e, e))
                self.i += 2
                continue
            buf.append(c)
            self.i += 1
        return "".join(buf)

    def _bare_key(self) -> str:
        j = self.i
        while j < len(self.s) and self.s[j] not in ":=,}" and not self.s[j].isspace():
            j += 1
        key, self.i = self.s[self.i:j], j
        return key

    def _word(self) -> Any:
        j = self.i
        while j < len(self.s) and self.s[j] not in ",]}\n":
            j += 1
        word = self.s[self.i:j].strip()
        self.i = j
        if word in _LITERALS:
            return _LITERALS[word]
        try:
            return json.loads(word)
        except ValueError:
            return word


def parse(text: str) -> Any:
    """Agent Zero's dirty_json.parse: the first value of text, leniently."""
    return DirtyJson.parse_string(text)


def try_parse(text: str) -> Any:
    """JSON when text is JSON, else the lenient reading."""
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return DirtyJson.parse_string(text)


def stringify(obj: Any, **kwargs: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, **kwargs)
