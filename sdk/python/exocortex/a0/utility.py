"""Agent Zero's agent.call_utility_model on the host's utility model: one
completion through Host.CallUtilityModel (Call.call_utility_model), with the
hooks util_model_call_before and util_model_call_after around it, as Agent
Zero fires its extensions inside call_utility_model.

The gRPC call blocks, so it runs on a worker thread: the file's event loop
keeps serving (a DeferredTask, another coroutine of the file, a utility hook of
the same plugin the host calls meanwhile on another thread). With a callback,
each piece of the model's text is handed to it on the event loop as it arrives,
as Agent Zero's stream callback gets it (before util_model_call_after); the
returned response is after it. background is accepted and changes nothing:
Agent Zero uses it to keep its rate-limit progress bar quiet, and the host's
bounds apply to every call alike."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any, Awaitable, Callable, Optional, Union

from exocortex.a0 import _runtime

Callback = Callable[[str], Union[Awaitable[None], None]]


def _call_of(agent: Any) -> Any:
    agent = agent if agent is not None else _runtime.current_agent.get()
    call = getattr(agent, "_call", None) or getattr(agent, "_last_call", None)
    if call is None:
        raise RuntimeError("a0compat: call_utility_model needs the host's services, which a ported file reaches "
                           "through a hook call: call it from execute (or a task it starts)")
    return call


async def call_utility_model(agent: Any, system: str, message: str, callback: Optional[Callback] = None,
                             background: bool = False) -> str:
    """The response of the host's utility model to system and message (see the
    module's doc); RuntimeError names what refused the call."""
    del background  # see the module's doc
    call = _call_of(agent)
    loop = asyncio.get_running_loop()
    if callback is None:
        return await loop.run_in_executor(None, call.call_utility_model, system, message)
    deltas: "asyncio.Queue[str]" = asyncio.Queue()

    def on_delta(d: str) -> None:
        loop.call_soon_threadsafe(deltas.put_nowait, d)

    async def hand(d: str) -> None:
        r = callback(d)
        if inspect.isawaitable(r):
            await r

    done = loop.run_in_executor(None, lambda: call.call_utility_model(system, message, on_delta))
    while not done.done():
        nxt = asyncio.ensure_future(deltas.get())
        await asyncio.wait({nxt, done}, return_when=asyncio.FIRST_COMPLETED)
        if nxt.done():
            await hand(nxt.result())
        else:
            nxt.cancel()
    # The deltas were queued before the answer's completion was (both go
    # through call_soon_threadsafe, in order): hand over the rest.
    while not deltas.empty():
        await hand(deltas.get_nowait())
    return done.result()
