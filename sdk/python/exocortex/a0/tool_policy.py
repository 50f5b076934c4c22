"""Agent Zero's helpers.tool_policy, onto Exocortex's tool catalog.

In Agent Zero a profile's policy allows or blocks tools; in Exocortex the host
decides which tools the model is given (the plugins' tools, less the disabled
extensions; the approval mode then asks for the risky calls) and says so in the
requests that list them (system_prompt's tools, chat_model_call_before's),
which the layer keeps. A tool is allowed when the host gives it to the model;
before any request listed the tools, every tool is (Agent Zero's "inherit").

A tool prompt (agent.system.tool.<name>.md) of a tool the host does not give
the model is dropped by filter_tool_prompts, so the model is not told of a
tool it cannot call."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from exocortex.a0 import _host
from exocortex.a0.errors import RepairableException

PROMPT_PREFIX = "agent.system.tool."
PROMPT_SUFFIX = ".md"
# Tools Agent Zero never blocks: the model's answer goes through response.
NON_CONFIGURABLE_TOOLS = frozenset({"response"})


@dataclass(frozen=True)
class ToolPolicyDecision:
    allowed: bool
    tool_id: str
    source: str
    mode: str
    reason: str = ""


def _catalog() -> Optional[Dict[str, str]]:
    t = _host.tools()
    return None if t is None else {name: desc for name, desc in t}


def get_policy(agent: Any = None) -> Dict[str, Any]:
    """The policy as Agent Zero's dict: "custom" with the host's tools allowed and
    everything else blocked once the host has listed them, else "inherit"."""
    cat = _catalog()
    if cat is None:
        return {"mode": "inherit", "default": "allow", "mcp_default": "allow", "allowed": [], "blocked": []}
    return {"mode": "custom", "default": "block", "mcp_default": "block",
            "allowed": [f"local:{n}" for n in sorted(cat)], "blocked": []}


def normalize_policy(config: Any) -> Dict[str, Any]:
    return get_policy()


def resolve_tool(agent: Any, tool_name: str, *, canonical_id: str = "", **kwargs: Any) -> ToolPolicyDecision:
    name = str(tool_name or "").strip().rsplit(":", 1)[-1]
    tool_id = canonical_id or f"local:{name}"
    if name in NON_CONFIGURABLE_TOOLS:
        return ToolPolicyDecision(True, tool_id, "framework-required", "invariant")
    cat = _catalog()
    if cat is None:
        return ToolPolicyDecision(True, tool_id, "inherited", "inherit")
    if name in cat:
        return ToolPolicyDecision(True, tool_id, "host-catalog", "custom")
    return ToolPolicyDecision(False, tool_id, "host-catalog", "custom", "not given to the model by the host")


def ensure_tool_allowed(agent: Any, tool_name: str, *, canonical_id: str = "") -> ToolPolicyDecision:
    d = resolve_tool(agent, tool_name, canonical_id=canonical_id)
    if not d.allowed:
        raise RepairableException(f'Tool "{tool_name}" is not available: the host does not give it to the model '
                                  "(enable its plugin, or remove it from disabled_extensions in config.yaml)")
    return d


def get_tool_catalog(agent: Any = None) -> List[Dict[str, Any]]:
    """The host's tools as Agent Zero's catalog entries ([] before any request listed them)."""
    cat = _catalog() or {}
    return [{"id": f"local:{n}", "name": n, "label": n.replace("_", " ").title(), "origin": "Exocortex",
             "description": d, "available": True}
            for n, d in sorted(cat.items(), key=lambda kv: kv[0].casefold()) if n not in NON_CONFIGURABLE_TOOLS]


def _prompt_name(prompt_file: str) -> str:
    b = os.path.basename(prompt_file)
    if b.startswith(PROMPT_PREFIX) and b.endswith(PROMPT_SUFFIX):
        return b[len(PROMPT_PREFIX):-len(PROMPT_SUFFIX)]
    return ""


def filter_tool_prompts(agent: Any, prompts: List[Tuple[str, str]]) -> List[str]:
    """The prompts, with "" for a tool prompt (agent.system.tool.<name>.md)
    whose tool the host does not give the model."""
    out = []
    for prompt_file, prompt in prompts:
        name = _prompt_name(prompt_file)
        out.append(prompt if not name or resolve_tool(agent, name).allowed else "")
    return out


def filter_tool_prompt(agent: Any, prompt_file: str, prompt: str) -> str:
    return filter_tool_prompts(agent, [(prompt_file, prompt)])[0]
