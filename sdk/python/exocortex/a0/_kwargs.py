"""The keyword arguments Agent Zero v1.7 hands its extension files at each hook
besides loop_data (KWARGS), and the data dict the files of an @extensible
function's _functions points get (POINTS), built from the Exocortex hook's
request; and what a file's changes to them become in the hook's response.
Used by exocortex.a0compat's Adapter."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional

class Response:
    """Agent Zero's tool Response, handed to tool_execute_after as response=."""

    def __init__(self, message: str = "", break_loop: bool = False, additional: Any = None) -> None:
        self.message = message
        self.break_loop = break_loop
        self.additional = additional


def _args(js: str) -> Dict[str, Any]:
    try:
        v = json.loads(js) if js else {}
    except ValueError:
        return {}
    return v if isinstance(v, dict) else {}


# The keyword arguments Agent Zero v1.7 passes at a hook besides loop_data, built
# from the hook's request, and what a file's changes to them become in the
# response. Each entry: hook -> (make(req) -> kwargs, answer(req, kwargs) -> dict
# of response fields, or {} when nothing changed).
def _tool_before(req: Any) -> Dict[str, Any]:
    tc = getattr(req, "tool_call", None)
    args = _args(tc.args_json) if tc is not None else {}
    return {"tool_name": tc.name if tc is not None else "", "tool_args": args,
            "_sent": json.dumps(args, sort_keys=True)}


def _tool_before_answer(req: Any, kw: Dict[str, Any]) -> Dict[str, Any]:
    now = json.dumps(kw["tool_args"], sort_keys=True, default=str)
    return {"args_json": json.dumps(kw["tool_args"], default=str)} if now != kw["_sent"] else {}


def _tool_after(req: Any) -> Dict[str, Any]:
    tc, res = getattr(req, "tool_call", None), getattr(req, "result", None)
    msg = res.content if res is not None else ""
    return {"tool_name": tc.name if tc is not None else "", "tool_args": _args(tc.args_json) if tc is not None else {},
            "response": Response(message=msg, break_loop=bool(res.break_loop) if res is not None else False),
            "_sent": msg}


def _tool_after_answer(req: Any, kw: Dict[str, Any]) -> Dict[str, Any]:
    msg = getattr(kw["response"], "message", kw["_sent"])
    return {"content": str(msg)} if msg != kw["_sent"] else {}


def _chunk(req: Any) -> Dict[str, Any]:
    d = {"chunk": getattr(req, "delta", ""), "full": getattr(req, "text", "")}
    return {"stream_data": d, "_sent": dict(d)}


def _chunk_answer(req: Any, kw: Dict[str, Any]) -> Dict[str, Any]:
    d, sent = kw["stream_data"], kw["_sent"]
    if d.get("chunk") != sent["chunk"]:
        return {"display": str(d.get("chunk") or "")}
    return {}


def _hist(req: Any) -> Dict[str, Any]:
    m = getattr(req, "message", None)
    content = m.content if m is not None else ""
    ai = m is not None and m.role == "assistant"
    return {"content_data": {"content": content}, "ai": ai, "_sent": content}


def _hist_answer(req: Any, kw: Dict[str, Any]) -> Dict[str, Any]:
    c = kw["content_data"].get("content")
    if c != kw["_sent"]:
        return {"content": c if isinstance(c, str) else json.dumps(c, default=str)}
    return {}


def _error(req: Any) -> Dict[str, Any]:
    e = getattr(req, "error", "")
    return {"msg": {"message": e}, "_sent": e}


def _error_answer(req: Any, kw: Dict[str, Any]) -> Dict[str, Any]:
    m = kw["msg"].get("message")
    return {"correction": str(m)} if m != kw["_sent"] else {}


def _stream_text(req: Any) -> Dict[str, Any]:
    return {"text": getattr(req, "text", "")}


def _none(req: Any, kw: Dict[str, Any]) -> Dict[str, Any]:
    return {}


def _msgs(ms: Any) -> List[Dict[str, str]]:
    return [{"role": m.role, "content": m.content} for m in ms]


def _chat_before(req: Any) -> Dict[str, Any]:
    return {"call_data": {"model": req.model, "messages": _msgs(req.prompt), "tools": list(req.tools),
                          "prompt_tokens": req.prompt_tokens, "num_ctx": req.num_ctx}}


def _chat_after(req: Any) -> Dict[str, Any]:
    d = {"model": req.model, "response": req.response, "reasoning": req.reasoning,
         "prompt_tokens": req.prompt_tokens, "output_tokens": req.output_tokens}
    return {"call_data": d, "response": req.response, "_sent": req.response}


def _chat_after_answer(req: Any, kw: Dict[str, Any]) -> Dict[str, Any]:
    r = kw["call_data"].get("response")
    return {"response": str(r)} if r != kw["_sent"] else {}


def _util_before(req: Any) -> Dict[str, Any]:
    d = {"model": req.model, "system": req.system, "message": req.message, "callback": None,
         "background": False, "purpose": req.purpose}
    return {"call_data": d, "_sent": dict(d)}


def _util_before_answer(req: Any, kw: Dict[str, Any]) -> Dict[str, Any]:
    d, sent = kw["call_data"], kw["_sent"]
    return {f: str(d.get(f) or "") for f in ("system", "message") if d.get(f) != sent[f]}


def _util_after(req: Any) -> Dict[str, Any]:
    d = {"model": req.model, "system": req.system, "message": req.message, "response": req.response,
         "purpose": req.purpose}
    return {"call_data": d, "response": req.response, "_sent": req.response}


def _exception(req: Any) -> Dict[str, Any]:
    return {"exception_data": {"exception": RuntimeError(req.error), "stage": req.stage}}


def _exception_answer(req: Any, kw: Dict[str, Any]) -> Dict[str, Any]:
    # Agent Zero: an extension that clears exception_data["exception"] handled it.
    return {"handled": True} if not kw["exception_data"].get("exception") else {}


def _chain_end(req: Any) -> Dict[str, Any]:
    return {"data": {"final_response": req.final_response, "stop_reason": req.stop_reason,
                     "iterations": req.iterations}}


def _dict_answer(kw: Dict[str, Any], name: str, fields: Dict[str, str]) -> Dict[str, Any]:
    """What a file changed in the dict kwarg name (data, ctx): the keys in fields
    become the response fields they name; a change to any other key is listed
    under "_lost" (the hook's response has no field for it; the layer logs it)."""
    d, sent = kw[name], kw["_sent"]
    out: Dict[str, Any] = {}
    lost: List[str] = []
    for k in sorted(set(d) | set(sent), key=str):
        if k in sent and d.get(k) == sent[k]:
            continue
        if k in fields and k in d:
            v = d[k]
            out[fields[k]] = v if isinstance(v, str) else json.dumps(v, default=str)
        else:
            lost.append(str(k))
    if lost:
        out["_lost"] = lost
    return out


def _hist_tool_result(req: Any) -> Dict[str, Any]:
    # Agent Zero: data = {"tool_name", "tool_result", **extra}; what is stored
    # is data, so a changed tool_result is the stored text.
    d = {"tool_name": req.tool_call.name, "tool_result": req.text}
    return {"data": d, "_sent": dict(d)}


def _hist_tool_result_answer(req: Any, kw: Dict[str, Any]) -> Dict[str, Any]:
    return _dict_answer(kw, "data", {"tool_result": "text"})


def _output_update(req: Any) -> Dict[str, Any]:
    # Agent Zero: ctx = {"content": the progress so far}; a changed content is
    # what is shown of it (the tool's result is not changed).
    d = {"content": req.output}
    return {"ctx": d, "_sent": dict(d)}


def _output_update_answer(req: Any, kw: Dict[str, Any]) -> Dict[str, Any]:
    return _dict_answer(kw, "ctx", {"content": "display"})


def _read_after(req: Any) -> Dict[str, Any]:
    d = {"content": req.content, "warnings": []}
    return {"data": d, "_sent": {"content": req.content, "warnings": []}}


def _read_after_answer(req: Any, kw: Dict[str, Any]) -> Dict[str, Any]:
    return _dict_answer(kw, "data", {"content": "content"})


def _write_before(req: Any) -> Dict[str, Any]:
    d = {"path": req.path, "content": req.content}
    return {"data": d, "_sent": dict(d)}


def _write_before_answer(req: Any, kw: Dict[str, Any]) -> Dict[str, Any]:
    return _dict_answer(kw, "data", {"content": "content"})


def _lines(text: str) -> int:
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def _write_after(req: Any) -> Optional[Dict[str, Any]]:
    # Agent Zero calls text_editor_write_after only when the write succeeded.
    if req.result.error:
        return None
    d = {"path": req.path, "total_lines": _lines(req.content)}
    return {"data": d, "_sent": dict(d)}


def _patch_before(req: Any) -> Dict[str, Any]:
    # Exocortex's text_editor patches by exact replacement: Agent Zero's
    # "replace" mode.
    d = {"path": req.path, "old_text": req.old_text, "new_text": req.new_text, "edits": [], "mode": "replace"}
    return {"data": d, "_sent": {"path": req.path, "old_text": req.old_text, "new_text": req.new_text,
                                  "edits": [], "mode": "replace"}}


def _patch_before_answer(req: Any, kw: Dict[str, Any]) -> Dict[str, Any]:
    return _dict_answer(kw, "data", {"old_text": "old_text", "new_text": "new_text"})


def _patch_after(req: Any) -> Optional[Dict[str, Any]]:
    # Called only when the patch succeeded, as in Agent Zero. The request does
    # not carry the file's length: total_lines is None.
    if req.result.error:
        return None
    d = {"path": req.path, "total_lines": None, "replacement_count": 1, "mode": "replace"}
    return {"data": d, "_sent": dict(d)}


def _after_answer(req: Any, kw: Dict[str, Any]) -> Dict[str, Any]:
    # Nothing a file changes after the edit has a field: any change is lost.
    return _dict_answer(kw, "data", {})


def _no_kwargs(req: Any) -> Dict[str, Any]:
    # Agent Zero passes nothing besides loop_data (reasoning_stream_end) or
    # nothing at all (embedding_model_changed).
    return {}


# Hooks whose response can refuse what is about to happen: a file that raises
# there refuses it, with the exception as the reason, as an exception out of
# Agent Zero's extension stops its text_editor call and the model is told.
REFUSES = {"text_editor_write_before", "text_editor_patch_before"}
# tool_execute_before: an exception out of a file there (Agent Zero's
# HandledException or any other) stops the tool call, as it stops Agent Zero's
# tool, with the exception as the reason. (The host stops it too when a guard
# fails in any other way: a crash, a timeout.)
BLOCKS = {"tool_execute_before"}

# banners: Agent Zero's api/banners hands the files the list to append to and
# the browser's location (frontend_context); each banner is a dict with id,
# type, priority, title, html or description, dismissible. The front end
# shows text, so the html is read as text (tags dropped, entities unescaped).
def _html_text(h: Any) -> str:
    import html as _html
    import re as _re
    t = _re.sub(r"<br\s*/?>", "\n", str(h or ""), flags=_re.I)
    t = _re.sub(r"<[^>]+>", "", t)
    return "\n".join(" ".join(line.split()) for line in _html.unescape(t).splitlines()).strip()


def _banners(req: Any) -> Dict[str, Any]:
    fe = req.frontend
    return {"banners": [], "frontend_context": {"hostname": fe.hostname, "protocol": fe.protocol, "client": fe.client,
                                                "authenticated": fe.authenticated}}


def _banners_answer(req: Any, kw: Dict[str, Any]) -> Dict[str, Any]:
    from exocortex.v1 import hooks_pb2
    out = []
    for b in kw["banners"]:
        if not isinstance(b, dict):
            continue
        text = b.get("html") or b.get("description") or b.get("text") or ""
        try:
            prio = int(b.get("priority", 0))
        except (TypeError, ValueError):
            prio = 0
        out.append(hooks_pb2.Banner(id=str(b.get("id", "")), type=str(b.get("type", "info")), priority=prio,
                                    title=str(b.get("title", "")), text=_html_text(text),
                                    dismissible=bool(b.get("dismissible", True))))
    return {"banners": out} if out else {}


# user_message_ui: Agent Zero's api/message hands data={"message",
# "attachment_paths"}; a change to data["message"] is the message the
# monologue starts with.
def _user_message_ui(req: Any) -> Dict[str, Any]:
    d = {"message": req.message, "attachment_paths": []}
    return {"data": d, "_sent": req.message}


def _user_message_ui_answer(req: Any, kw: Dict[str, Any]) -> Dict[str, Any]:
    m = kw["data"].get("message", "")
    out: Dict[str, Any] = {"message": str(m)} if m != kw["_sent"] else {}
    if kw["data"].get("attachment_paths"):
        out["_lost"] = ["data['attachment_paths']"]
    return out


KWARGS = {
    "banners": (_banners, _banners_answer),
    "user_message_ui": (_user_message_ui, _user_message_ui_answer),
    "startup_migration": (_no_kwargs, _none),
    "job_loop": (_no_kwargs, _none),
    "chat_model_call_before": (_chat_before, _none),
    "chat_model_call_after": (_chat_after, _chat_after_answer),
    "util_model_call_before": (_util_before, _util_before_answer),
    "util_model_call_after": (_util_after, _chat_after_answer),
    "reasoning_stream_chunk": (_chunk, _chunk_answer),
    "reasoning_stream": (_stream_text, _none),
    "response_stream": (_stream_text, _none),
    "message_loop_exception": (_exception, _exception_answer),
    "process_chain_end": (_chain_end, _none),
    "tool_execute_before": (_tool_before, _tool_before_answer),
    "tool_execute_after": (_tool_after, _tool_after_answer),
    "response_stream_chunk": (_chunk, _chunk_answer),
    "hist_add_before": (_hist, _hist_answer),
    "error_format": (_error, _error_answer),
    "hist_add_tool_result": (_hist_tool_result, _hist_tool_result_answer),
    "tool_output_update": (_output_update, _output_update_answer),
    "text_editor_read_after": (_read_after, _read_after_answer),
    "text_editor_write_before": (_write_before, _write_before_answer),
    "text_editor_write_after": (_write_after, _after_answer),
    "text_editor_patch_before": (_patch_before, _patch_before_answer),
    "text_editor_patch_after": (_patch_after, _after_answer),
    "reasoning_stream_end": (_no_kwargs, _none),
    "embedding_model_changed": (_no_kwargs, _none),
}


# Agent Zero's @extensible points (_functions/<module>/<qualname>/start|end)
# that `plugins port` serves at an Exocortex hook (scaffold/a0port.Point): how
# each kind hands the file Agent Zero's data dict ({"args", "kwargs", "result",
# "exception"}) from the hook's request, and what of a change to it the hook's
# response carries. A point's file gets the agent as args[0], as self.
def _point_exception(agent: Any, req: Any) -> Optional[Dict[str, Any]]:
    exc = RuntimeError(req.error)
    d = {"args": (agent, req.stage, exc), "kwargs": {}, "result": None, "exception": exc}
    return {"data": d}


def _point_exception_answer(req: Any, kw: Dict[str, Any]) -> Dict[str, Any]:
    # Agent Zero: an end file that clears data["exception"] handled it.
    return {"handled": True} if not kw["data"].get("exception") else {}


def _point_call(agent: Any, req: Any) -> Optional[Dict[str, Any]]:
    return {"data": {"args": (agent,), "kwargs": {}, "result": None, "exception": None}}


def _message_kind(m: Any) -> str:
    if m.signal:
        return "warning"
    return "assistant" if m.role == "assistant" else m.role


def _point_message(role: str) -> Any:
    def build(agent: Any, req: Any) -> Optional[Dict[str, Any]]:
        m = req.message
        if _message_kind(m) != role:
            return None  # Agent Zero calls the function for this kind of message only
        return {"data": {"args": (agent, m.content), "kwargs": {}, "result": None, "exception": None},
                "_sent": m.content}
    return build


def _point_message_answer(req: Any, kw: Dict[str, Any]) -> Dict[str, Any]:
    args = kw["data"].get("args") or ()
    text = args[1] if len(args) > 1 else kw["_sent"]
    return {"content": str(text)} if text != kw["_sent"] else {}


def _point_tool_result(agent: Any, req: Any) -> Optional[Dict[str, Any]]:
    return {"data": {"args": (agent, req.tool_call.name, req.text), "kwargs": {}, "result": None, "exception": None},
            "_sent": req.text}


def _point_tool_result_answer(req: Any, kw: Dict[str, Any]) -> Dict[str, Any]:
    args = kw["data"].get("args") or ()
    text = args[2] if len(args) > 2 else kw["_sent"]
    return {"text": str(text)} if text != kw["_sent"] else {}


POINTS = {
    "exception": (_point_exception, _point_exception_answer),
    "call": (_point_call, _none),
    "message:assistant": (_point_message("assistant"), _point_message_answer),
    "message:warning": (_point_message("warning"), _point_message_answer),
    "message:user": (_point_message("user"), _point_message_answer),
    "tool_result": (_point_tool_result, _point_tool_result_answer),
}
