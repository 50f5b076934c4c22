"""Agent Zero's helpers.tool, as far as extensions use it: the tool Response
(the value tool_execute_after hands an extension as response=, whose message an
extension may change) and the Tool base class, for the type hints and
isinstance checks of extension files. Tools themselves are Exocortex's (the
host runs them); a ported tree's tool classes are not served as tools."""

from __future__ import annotations

from typing import Any, Optional

from exocortex.a0._kwargs import Response


class Tool:
    """Agent Zero's Tool, holding what a tool call is made of (the agent, the
    tool's name and method, its arguments, the message that called it). Its
    execute is the tool's own work, which a subclass provides; the host never
    calls it (Exocortex's tools run in the host and its plugins)."""

    def __init__(self, agent: Any, name: str, method: Optional[str], args: dict, message: str,
                 loop_data: Any = None, **kwargs: Any) -> None:
        self.agent = agent
        self.name = name
        self.method = method
        self.args = args
        self.loop_data = loop_data
        self.message = message
        self.progress = ""

    async def execute(self, **kwargs: Any) -> Response:
        raise NotImplementedError(
            f"a0compat: tool {self.name!r}: a ported tree's tools do not run in Exocortex; "
            "the host runs its own tools (port the tool as an Exocortex tool)")

    async def before_execution(self, **kwargs: Any) -> None:
        return None

    async def after_execution(self, response: Response, **kwargs: Any) -> None:
        return None

    def set_progress(self, content: Optional[str]) -> None:
        self.progress = content or ""

    def add_progress(self, content: Optional[str]) -> None:
        self.progress += content or ""


__all__ = ["Response", "Tool"]
