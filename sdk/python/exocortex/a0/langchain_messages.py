"""The message classes of langchain_core.messages as Agent Zero's code uses
them: a message carrying its content (a string, or a list of parts) and its
type ("system", "human", "ai"), built with content= (or positionally), read as
.content and .type, compared by both. What a ported file builds from them goes
to the host's models through the layer (a model's unified_call,
exocortex.a0.models), which reads role and content and nothing else: these
are not LangChain's runnables, and their other fields (tool calls, usage) are
carried as given but never used."""

from __future__ import annotations

from typing import Any, Dict, List, Union

Content = Union[str, List[Any]]


class BaseMessage:
    type = "base"

    def __init__(self, content: Content = "", **kwargs: Any) -> None:
        self.content = content
        self.additional_kwargs: Dict[str, Any] = kwargs.pop("additional_kwargs", {}) or {}
        self.id = kwargs.pop("id", None)
        self.name = kwargs.pop("name", None)
        for k, v in kwargs.items():
            setattr(self, k, v)

    def text(self) -> str:
        """The content as text (the text parts of a list joined)."""
        return content_text(self.content)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BaseMessage) and (self.type, self.content) == (other.type, other.content)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(content={self.content!r})"


class SystemMessage(BaseMessage):
    type = "system"


class HumanMessage(BaseMessage):
    type = "human"


class AIMessage(BaseMessage):
    type = "ai"


class ToolMessage(BaseMessage):
    type = "tool"

    def __init__(self, content: Content = "", tool_call_id: str = "", **kwargs: Any) -> None:
        super().__init__(content, **kwargs)
        self.tool_call_id = tool_call_id


def content_text(c: Any) -> str:
    if isinstance(c, str):
        return c
    if isinstance(c, list):
        out = []
        for p in c:
            if isinstance(p, str):
                out.append(p)
            elif isinstance(p, dict) and p.get("type") == "text":
                out.append(str(p.get("text", "")))
        return "\n".join(out)
    return "" if c is None else str(c)
