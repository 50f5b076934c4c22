"""Agent Zero's helpers.mcp_handler, as far as extensions read it: the MCP
servers Agent Zero's settings configure, and the prompt listing their tools.

A ported plugin has none: Exocortex's tools (its built-ins and its plugins')
reach the model through the host's one tool catalogue, so MCPConfig.servers is
empty and get_tools_prompt is "", as in an Agent Zero with no MCP server
configured. Configuring servers from a plugin (update) raises NoCounterpart."""

from __future__ import annotations

from typing import Any, List, Optional


class NoCounterpart(RuntimeError):
    """An Agent Zero call whose work belongs to the host here."""


class MCPConfig:
    _instance: "Optional[MCPConfig]" = None

    def __init__(self) -> None:
        self.servers: List[Any] = []
        self.disconnected_servers: List[Any] = []

    @classmethod
    def get_instance(cls) -> "MCPConfig":
        if cls._instance is None:
            cls._instance = cls()
        return cls._instance

    @classmethod
    def update(cls, config_str: str) -> Any:
        raise NoCounterpart(
            "a0compat: MCPConfig.update: a ported plugin configures no MCP servers; the host's tool catalogue "
            "is what the model gets (give the tools as an Exocortex plugin's tools)")

    def get_servers_status(self) -> List[Any]:
        return []

    def has_tool(self, tool_name: str) -> bool:
        return False

    def get_tools_prompt(self, server_name: str = "") -> str:
        return ""


__all__ = ["MCPConfig", "NoCounterpart"]
