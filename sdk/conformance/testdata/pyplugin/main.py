#!/usr/bin/python3
"""The conformance plugin written with the Python SDK: the same plugin as
../goplugin/main.go (written with the Go SDK), answering the same way. The suite in
sdk/conformance installs the SDK beside this file and starts it with
{"command": ["/usr/bin/python3", "main.py"]}; to try it from the source tree, put
sdk/python on PYTHONPATH.

Extensions (what each is for in the suite):

    echo              every hook: answers each from its request, writes conformance_seen
    counter           typed state: failure_tracker, loop_active, the plugin key
    nosy              undeclared reads and writes (reply "read", "write", "reset")
    repeat_watch      signals: reacts to a message carrying signals.REPEAT
    fragile           errors (reply "boom", "fail", "status")
    undeclared_blocks prompt blocks without injects_prompt
    sleepy            timeouts (user message "sleep")
    relay_a, _b, _c   batches (message_loop_end, after fragile): state passed along
                      a batch, and each extension's own copy of the request
    prompt_reader,    batches (system_prompt, message_loop_prompts_after): the
    prompt_skimmer    prompt so far reaches only the extension declaring reads_prompt

Tools: shout, failing, panicky, stateful, delegate (the host's services).
"""

import json
import time

import grpc
from google.protobuf import wrappers_pb2

import exocortex as exo
from exocortex import signals
from exocortex.v1 import context_pb2, hooks_pb2, host_pb2, state_pb2

SEEN = exo.Key(wrappers_pb2.StringValue, name="conformance_seen", scope=exo.SCOPE_SESSION,
               doc="The last hook echo answered, with the call's message id.")
TRACKER = exo.Key(state_pb2.FailureTracker)
LOOP_ACTIVE = exo.Key(state_pb2.LoopActive)


def mark(call):
    """Record the hook and the call's message id in conformance_seen."""
    SEEN.set(call, wrappers_pb2.StringValue(value=f"{call.hook_name}:{call.context.message_id}"))


def block(content):
    return [context_pb2.PromptBlock(title="ECHO", content=content)]


class Echo:
    """Answers every hook from its request."""

    def spec(self):
        return exo.Spec(name="echo", order=10, hook_order={"system_prompt": 15}, writes=[SEEN],
                        injects_prompt=True, reads_history=True, reads_prompt=True,
                        description="Answers every hook from its request.")

    def agent_init(self, call, req):
        mark(call)

    def monologue_start(self, call, req):
        mark(call)

    def hist_add_before(self, call, req):
        mark(call)
        return hooks_pb2.HistAddBeforeResponse(content="echo:" + req.message.content)

    def message_loop_start(self, call, req):
        mark(call)

    def message_loop_prompts_before(self, call, req):
        mark(call)
        return hooks_pb2.MessageLoopPromptsBeforeResponse(
            prompt_blocks=block(f"before {req.iteration} {len(req.history)}"))

    def system_prompt(self, call, req):
        mark(call)
        tools = ",".join(t.name for t in req.tools)
        return hooks_pb2.SystemPromptResponse(prompt_blocks=block(f"system {req.system_prompt} [{tools}]"))

    def message_loop_prompts_after(self, call, req):
        mark(call)
        return hooks_pb2.MessageLoopPromptsAfterResponse(prompt_blocks=block(
            f"after {req.iteration} {len(req.extras)} {req.prompt_tokens}/{req.num_ctx}"))

    def before_main_llm_call(self, call, req):
        mark(call)

    def response_stream_chunk(self, call, req):
        mark(call)
        return hooks_pb2.ResponseStreamChunkResponse(display=req.text.upper() + "|" + req.delta)

    def response_stream_end(self, call, req):
        mark(call)
        return hooks_pb2.ResponseStreamEndResponse(display="end:" + req.text)

    def error_format(self, call, req):
        mark(call)
        return hooks_pb2.ErrorFormatResponse(
            correction=f"fix {req.error} ({req.signal}, tool {json.dumps(req.tool_name)})")

    def tool_execute_before(self, call, req):
        mark(call)
        tc = req.tool_call
        if tc.name == "forbidden":
            return hooks_pb2.ToolExecuteBeforeResponse(block=hooks_pb2.ToolBlock(
                reason="forbidden by echo", needs_approval=True, action=f"{tc.name} {tc.args_json}"))
        return hooks_pb2.ToolExecuteBeforeResponse(args_json=f'{{"wrapped":{tc.args_json}}}')

    def tool_execute_after(self, call, req):
        mark(call)
        return hooks_pb2.ToolExecuteAfterResponse(annotations=["echo:" + req.tool_call.name],
                                                  content=req.result.content.upper())

    def message_loop_end(self, call, req):
        mark(call)
        resp = hooks_pb2.MessageLoopEndResponse(intervention=f"end {req.iteration} {req.reply} {len(req.added)}")
        if req.reply == "stop":
            resp.stop = "echo was asked to stop"
        return resp

    def monologue_end(self, call, req):
        mark(call)
        return hooks_pb2.MonologueEndResponse(notices=["final:" + req.final_response, "stop:" + req.stop_reason])

    def chat_model_call_before(self, call, req):
        mark(call)

    def chat_model_call_after(self, call, req):
        mark(call)
        thought = json.dumps(req.reasoning)
        return hooks_pb2.ChatModelCallAfterResponse(response=f"{req.response} (after {req.model}, thought {thought})")

    def util_model_call_before(self, call, req):
        mark(call)
        return hooks_pb2.UtilModelCallBeforeResponse(system=req.system + " Be terse.", message=req.purpose + ": " + req.message)

    def util_model_call_after(self, call, req):
        mark(call)
        return hooks_pb2.UtilModelCallAfterResponse(response=req.response.upper())

    def reasoning_stream_chunk(self, call, req):
        mark(call)
        return hooks_pb2.ReasoningStreamChunkResponse(display="*" * len(req.delta.encode()) + "|" + req.text)

    def reasoning_stream(self, call, req):
        mark(call)

    def reasoning_stream_end(self, call, req):
        mark(call)
        return hooks_pb2.ReasoningStreamEndResponse(display="thought:" + req.text)

    def response_stream(self, call, req):
        mark(call)

    def message_loop_exception(self, call, req):
        mark(call)
        return hooks_pb2.MessageLoopExceptionResponse(handled=req.stage == "model")

    def process_chain_end(self, call, req):
        mark(call)

    def hist_add_tool_result(self, call, req):
        mark(call)
        return hooks_pb2.HistAddToolResultResponse(text=f"stored {req.tool_call.name}: {req.text}")

    def tool_output_update(self, call, req):
        mark(call)
        return hooks_pb2.ToolOutputUpdateResponse(display=req.delta + "|" + req.output.upper())

    def text_editor_read_after(self, call, req):
        mark(call)
        return hooks_pb2.TextEditorReadAfterResponse(
            content=f"read {req.path} {req.line_from}-{req.line_to}: {req.content}")

    def text_editor_write_before(self, call, req):
        mark(call)
        if req.path == "forbidden.txt":
            return hooks_pb2.TextEditorWriteBeforeResponse(refuse="echo refuses " + req.path)
        return hooks_pb2.TextEditorWriteBeforeResponse(content=req.content.upper())

    def text_editor_write_after(self, call, req):
        mark(call)

    def text_editor_patch_before(self, call, req):
        mark(call)
        if req.path == "forbidden.txt":
            return hooks_pb2.TextEditorPatchBeforeResponse(refuse="echo refuses " + req.path)
        return hooks_pb2.TextEditorPatchBeforeResponse(new_text=req.new_text.upper())

    def text_editor_patch_after(self, call, req):
        mark(call)

    def embedding_model_changed(self, call, req):
        mark(call)

    def history_compress_before(self, call, req):
        mark(call)
        return hooks_pb2.HistoryCompressBeforeResponse(keep=["keep %d %s" % (len(req.leaving), req.trigger)])

    def tool_approval_request(self, call, req):
        mark(call)
        if req.tool_call.name == "forbidden":
            return hooks_pb2.ToolApprovalRequestResponse(refuse="echo refuses forbidden in " + req.mode)
        return hooks_pb2.ToolApprovalRequestResponse(allow=True)

    def operator_notification(self, call, req):
        mark(call)


class Counter:
    """Counts consecutive failures per tool and clears loop_active."""

    def spec(self):
        return exo.Spec(name="counter", order=20, reads=[TRACKER, LOOP_ACTIVE, SEEN],
                        writes=[TRACKER, LOOP_ACTIVE], resets=[LOOP_ACTIVE], required=True, timeout=1.5,
                        for_tools=["shell", "failing", "shell"], description="Counts consecutive failures per tool.")

    def tool_execute_after(self, call, req):
        ft = TRACKER.get(call) or state_pb2.FailureTracker()
        name = req.tool_call.name
        if req.result.error:
            ft.failures[name] = ft.failures.get(name, 0) + 1
        elif name in ft.failures:
            del ft.failures[name]
        TRACKER.set(call, ft)
        la = LOOP_ACTIVE.get(call)
        if la is not None and la.active:
            LOOP_ACTIVE.reset(call)
        seen = SEEN.get(call)
        count = ft.failures.get(name, 0)
        call.logger.info("counted", tool=name, failures=count)
        return hooks_pb2.ToolExecuteAfterResponse(
            annotations=[f"failures={count}", "seen=" + (seen.value if seen is not None else "none")])


class Nosy:
    """Touches keys it did not declare, as its request's reply says."""

    def spec(self):
        return exo.Spec(name="nosy", order=30, reads=[SEEN], description="Touches keys it did not declare.")

    def message_loop_end(self, call, req):
        if req.reply == "read":
            TRACKER.get(call)
        elif req.reply == "write":
            TRACKER.set(call, state_pb2.FailureTracker())
        elif req.reply == "reset":
            LOOP_ACTIVE.reset(call)
        return hooks_pb2.MessageLoopEndResponse(intervention="nosy did nothing wrong")


class RepeatWatch:
    """Asks for another approach when the model repeats itself."""

    def spec(self):
        return exo.Spec(name="repeat_watch", order=40, consumes_signals=[signals.REPEAT],
                        description="Asks for another approach when the model repeats itself.")

    def message_loop_end(self, call, req):
        for m in req.added:
            if m.signal == signals.REPEAT:
                return hooks_pb2.MessageLoopEndResponse(
                    intervention=f"repeat noticed in {m.id}; try another approach")
        return None


class Fragile:
    """Fails on request."""

    def spec(self):
        return exo.Spec(name="fragile", order=50, description="Fails on request.")

    def message_loop_end(self, call, req):
        if req.reply == "boom":
            raise RuntimeError("fragile was asked to blow up")
        if req.reply == "fail":
            raise exo.HookError("disk full")
        if req.reply == "status":
            raise exo.StatusError(grpc.StatusCode.RESOURCE_EXHAUSTED, "slow down")
        return hooks_pb2.MessageLoopEndResponse(intervention="fragile is fine")


class UndeclaredBlocks:
    """Adds prompt blocks it did not declare."""

    def spec(self):
        return exo.Spec(name="undeclared_blocks", order=60, description="Adds prompt blocks it did not declare.")

    def message_loop_prompts_after(self, call, req):
        return hooks_pb2.MessageLoopPromptsAfterResponse(prompt_blocks=block("undeclared"))


class Sleepy:
    """Hangs when asked to, past its own deadline."""

    def spec(self):
        return exo.Spec(name="sleepy", order=70, timeout=0.3, once_per_session=True, description="Hangs on request.")

    def monologue_start(self, call, req):
        if req.user_message.content == "sleep":
            time.sleep(30)  # a hung extension


class Relay:
    """Passes a note along a batch: takes away the note of the relay before it, and
    otherwise leaves its own, saying what it saw."""

    def __init__(self, name, order):
        self.name, self.order = name, order

    def spec(self):
        return exo.Spec(name=self.name, order=self.order, reads=[SEEN], writes=[SEEN], resets=[SEEN],
                        description="Passes a note along a batch.")

    def message_loop_end(self, call, req):
        seen = SEEN.get(call)
        saw = seen.value if seen is not None else "nothing"
        if saw.startswith("relay"):
            SEEN.reset(call)
        else:
            SEEN.set(call, wrappers_pb2.StringValue(value=f"{self.name} saw {saw} at iteration {req.iteration}"))


class Porter:
    """Changes its request in place, as a port of an Agent Zero extension that
    mutates loop_data would, and returns nothing: each call must fail, naming the
    field and the response field that does the job."""

    def spec(self):
        return exo.Spec(name="porter", order=64, description="Changes its requests instead of answering.")

    def monologue_start(self, call, req):
        req.user_message.content = "[ported] " + req.user_message.content

    def hist_add_before(self, call, req):
        req.message.content = req.message.content.replace("secret", "[redacted]")

    def message_loop_prompts_before(self, call, req):
        del req.history[0]

    def before_main_llm_call(self, call, req):
        req.prompt.add(role="system", content="Be brief.")

    def tool_execute_after(self, call, req):
        req.result.content += "\n(checked by porter)"

    def message_loop_end(self, call, req):
        req.iteration += 100


class PromptWatch:
    """Says which of the prompt's fields its request carried, in state only (so a
    batch goes on past it): in a batch, system_prompt, extras and prompt_tokens reach
    it only when it declares reads_prompt, and the other fields always."""

    def __init__(self, name, order, reads):
        self.name, self.order, self.reads = name, order, reads

    def spec(self):
        return exo.Spec(name=self.name, order=self.order, writes=[SEEN], reads_prompt=self.reads,
                        description="Says which of the prompt's fields it was given.")

    def system_prompt(self, call, req):
        SEEN.set(call, wrappers_pb2.StringValue(
            value=f"{self.name} saw system_prompt [{req.system_prompt}], {len(req.tools)} tools"))

    def message_loop_prompts_after(self, call, req):
        SEEN.set(call, wrappers_pb2.StringValue(
            value=f"{self.name} saw {len(req.extras)} extras, prompt_tokens {req.prompt_tokens}, "
                  f"num_ctx {req.num_ctx}, iteration {req.iteration}, history {len(req.history)}"))


def shout(call, args):
    if not isinstance(args, dict):
        raise exo.ToolError("the arguments must be a JSON object")
    return context_pb2.ToolResult(content=str(args.get("text", "")).upper() + "! (" + call.context.session_id + ")")


def failing(call, args):
    raise exo.ToolError("exit status 2", context_pb2.ToolResult(content="partial output"))


def panicky(call, args):
    raise RuntimeError("tool bug")


def stateful(call, args):
    TRACKER.get(call)


def delegate(call, args):
    try:
        resp = call.host().RunSubordinate(host_pb2.RunSubordinateRequest(context=call.context,
                                                                         message=str(args.get("task", ""))))
    except grpc.RpcError as e:
        raise exo.ToolError(f"the host refused: {e.details()}") from None
    return f"{resp.response} ({resp.iterations} iterations)"


if __name__ == "__main__":
    exo.serve(exo.Plugin(
        name="conformance",
        version="1.0.0",
        extensions=[Echo(), Counter(), Nosy(), RepeatWatch(), Fragile(), UndeclaredBlocks(), Sleepy(),
                    Relay("relay_a", 61), Relay("relay_b", 62), Relay("relay_c", 63), Porter(),
                    PromptWatch("prompt_skimmer", 80, False), PromptWatch("prompt_reader", 81, True)],
        tools=[
            exo.Tool("shout", "Repeats its text argument, loudly.",
                     '{"type":"object","properties":{"text":{"type":"string"}}}', shout,
                     prompt_file="agent.system.tool.shout.md"),
            exo.Tool("failing", "Fails with partial output.", run=failing),
            exo.Tool("panicky", "Has a bug.", run=panicky),
            exo.Tool("stateful", "Reads state, which tools may not.", run=stateful),
            exo.Tool("delegate", "Hands its task to a subordinate agent, through the host's services.",
                     '{"type":"object","properties":{"task":{"type":"string"}}}', delegate),
        ],
        files=[
            exo.FileSpec(id="shout_log", path="$EXOCORTEX_HOME/shout.log", access=exo.ACCESS_WRITE, user="shout",
                         doc="What was shouted."),
            exo.FileSpec(id="catalog", path="$PROJECT/catalog.json", access=exo.ACCESS_READ, user="echo"),
        ],
    ))
