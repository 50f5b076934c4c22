"""Agent Zero's helpers.defer: DeferredTask runs a coroutine on an event loop
thread named by thread_name, shared by every task of that name in the plugin
process (THREAD_BACKGROUND is one such thread), so the work goes on after the
hook call that started it has answered. The task keeps the agent of the call
that started it (its agent data and memory reach the same session); an
exception it ends with goes to the plugin's log. Each named loop is an
exocortex.aio.PluginLoop: on the plugin's shutdown (and so on hot reload) its
pending tasks are cancelled and the log names them."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from typing import Any, Callable, Dict, Optional

from exocortex import aio
from exocortex.a0 import _runtime

THREAD_BACKGROUND = "Background"


class EventLoopThread:
    """An event loop running in a daemon thread, one per name."""

    _all: Dict[str, "EventLoopThread"] = {}
    _lock = threading.Lock()

    def __init__(self, name: str) -> None:
        self.name = name
        self.plugin_loop = aio.PluginLoop(f"a0-{name}")
        self.loop = self.plugin_loop.loop

    @classmethod
    def named(cls, name: str) -> "EventLoopThread":
        with cls._lock:
            t = cls._all.get(name)
            if t is None or t.loop.is_closed():
                t = cls._all[name] = EventLoopThread(name)
            return t

    def run_coroutine(self, coro: Any, where: str = "") -> "concurrent.futures.Future[Any]":
        return self.plugin_loop.submit(coro, where)


class DeferredTask:
    def __init__(self, thread_name: str = THREAD_BACKGROUND) -> None:
        self.event_loop_thread = EventLoopThread.named(thread_name)
        self._future: Optional["concurrent.futures.Future[Any]"] = None

    def start_task(self, func: Callable[..., Any], *args: Any, **kwargs: Any) -> "DeferredTask":
        agent = _runtime.current_agent.get()

        async def run() -> Any:
            _runtime.current_agent.set(agent)
            out = func(*args, **kwargs)
            if asyncio.iscoroutine(out):
                out = await out
            return out

        owner = getattr(agent, "_owner", "")
        coro = run()
        coro.__qualname__ = getattr(func, "__qualname__", coro.__qualname__)
        self._future = self.event_loop_thread.run_coroutine(coro, f"a DeferredTask of {owner}" if owner else "a DeferredTask")
        self._future.add_done_callback(self._report)
        return self

    @staticmethod
    def _report(f: "concurrent.futures.Future[Any]") -> None:
        if not f.cancelled() and f.exception() is not None:
            e = f.exception()
            _runtime.get().logger.error(f"a0compat: a deferred task failed: {type(e).__name__}: {e}")

    def _started(self) -> "concurrent.futures.Future[Any]":
        if self._future is None:
            raise RuntimeError("DeferredTask: no task started: call start_task first")
        return self._future

    def add_done_callback(self, callback: Callable[[Any], Any]) -> None:
        self._started().add_done_callback(callback)

    def is_ready(self) -> bool:
        return self._future is not None and self._future.done()

    def is_alive(self) -> bool:
        return self._future is not None and not self._future.done()

    def result_sync(self, timeout: Optional[float] = None) -> Any:
        return self._started().result(timeout)

    async def result(self, timeout: Optional[float] = None) -> Any:
        return await asyncio.wait_for(asyncio.wrap_future(self._started()), timeout)

    def kill(self, terminate_thread: bool = False) -> None:
        if self._future is not None:
            self._future.cancel()

    def kill_children(self) -> None:
        """Agent Zero's child tasks are not kept here: nothing to kill."""
