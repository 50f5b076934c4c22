"""The types of Agent Zero's agent module that extensions import beside Agent
and LoopData: UserMessage (a message from the user with its attachments) and
AgentContextType (a chat the user runs, a scheduled task's, or a background
one). Every context of a ported plugin is the user's session: USER."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import List


class AgentContextType(Enum):
    USER = "user"
    TASK = "task"
    BACKGROUND = "background"


@dataclass
class UserMessage:
    message: str
    attachments: List[str] = field(default_factory=list)
    system_message: List[str] = field(default_factory=list)
    id: str = ""


__all__ = ["AgentContextType", "UserMessage"]
