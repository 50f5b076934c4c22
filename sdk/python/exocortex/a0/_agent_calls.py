"""The methods of Agent Zero's Agent that a ported file may call and that have
no counterpart in a plugin: each raises NoCounterpart naming the call and what
to do instead (the porting report calls a file that calls one "needs a hand"
at that line), instead of an AttributeError that names nothing."""

from __future__ import annotations

import json
import uuid
from typing import Any


class _Said(str):
    """What hist_add_ai_response returns: Agent Zero's Message, here its text
    with content, output_text(), ai and id (the id the history's message gets)."""

    ai = True
    id = ""

    @property
    def content(self) -> str:
        return str(self)

    def output_text(self) -> str:
        return str(self)


class NoCounterpart(RuntimeError):
    """An Agent method whose work belongs to the host here."""


_HISTORY = ("the history is the core's: a plugin adds text to what the model reads with a prompt block "
            "(loop_data.extras_temporary / extras_persistent at message_loop_prompts_after), or rewrites a message "
            "as it is added at hist_add_before")
_MODEL = ("the host makes the model calls: ask for a utility-model answer with self.agent.call_utility_model "
          "or self.agent.get_utility_model().unified_call, or watch the main model's calls at "
          "chat_model_call_before/after")


def _refuse(call: str, what: str) -> Any:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise NoCounterpart(f"a0compat: Agent.{call} has no counterpart in a ported plugin: {what}")
    method.__name__ = call
    return method


class NoCounterpartCalls:
    """Mixed into the layer's Agent."""

    def hist_add_ai_response(self, message: str) -> Any:
        """At agent_init, the agent's opening message of a new session (Agent
        Zero's initial message): the host adds it to an empty history as the
        first assistant message (AgentInitResponse.opening_messages). Anywhere
        else the history is the core's (NoCounterpart)."""
        opening = getattr(self, "_opening", None)
        if opening is None:
            raise NoCounterpart("a0compat: Agent.hist_add_ai_response has no counterpart in a ported plugin outside "
                                "agent_init (where it opens a new session's history): " + _HISTORY)
        from exocortex.v1 import context_pb2
        text = message if isinstance(message, str) else json.dumps(message, ensure_ascii=False, default=str)
        said = _Said(text)
        said.id = str(uuid.uuid4())
        opening.append(context_pb2.Message(id=said.id, role="assistant", content=text))
        return said
    hist_add_user_message = _refuse("hist_add_user_message", _HISTORY)
    hist_add_warning = _refuse("hist_add_warning", _HISTORY)
    hist_add_message = _refuse("hist_add_message", _HISTORY)
    hist_add_tool_result = _refuse("hist_add_tool_result", _HISTORY)
    handle_intervention = _refuse(
        "handle_intervention", "interventions are the host's: a message_loop_end extension queues one with its "
        "response's intervention")
    call_chat_model = _refuse("call_chat_model", _MODEL)
    get_chat_model = _refuse("get_chat_model", _MODEL)

    def get_utility_model(self) -> Any:
        """The host's utility model, with Agent Zero's unified_call (exocortex.a0.models)."""
        from exocortex.a0.models import UtilityModel
        return UtilityModel(self)
    get_embedding_model = _refuse("get_embedding_model", _MODEL)
