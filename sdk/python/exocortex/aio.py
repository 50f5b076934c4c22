"""The plugin process's asyncio event loops: one long-lived loop that runs every
hook call's coroutine (an `async def` hook method of the SDK, an Agent Zero
`async def execute` served by a0compat), so that a task a call starts
(`asyncio.create_task(...)`) lives on after the call has answered, keeps running in
the background between calls, and can be awaited, or polled with `task.done()`, by
a later call, as in Agent Zero, whose extensions all run on one loop.

What a hook call keeps of its own semantics:
  - its deadline and the host's cancellation: the caller's thread waits for the
    call's coroutine; when the call's deadline passes, or the host gives up on the
    call, the coroutine (and only it: not the tasks it started) is cancelled and the
    call ends with CallEnded;
  - its order: the caller waits for each call before answering, so the calls of one
    batch or stream run one after the other, as before;
  - the fast path: a coroutine that awaits nothing is driven to its end on the
    caller's thread (drive), as a0compat did, without a hop to the loop's thread.

Tasks are held strongly until they finish (the loop itself only keeps weak
references: a task nobody stores could otherwise vanish mid-flight with "Task was
destroyed but it is pending"), each named after the call that started it. On the
plugin's shutdown (the host's graceful stop, which is also how hot reload ends the
old process) close_all() cancels every pending task, waits briefly for them to
unwind, and logs what was cancelled.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import threading
from typing import Any, Callable, Dict, List, Optional

# How often a waiting call checks that the host still wants it (is_active): the
# result itself is taken as soon as it is there.
POLL = 0.05
# How long close() lets cancelled tasks unwind (their finally blocks and
# except CancelledError handlers) before the loop stops.
CLOSE_GRACE = 0.5

# The call running now, as "extension X at hook_name" (set around each call's
# coroutine): what a task started by it is named after.
origin: "contextvars.ContextVar[str]" = contextvars.ContextVar("exocortex_call_origin", default="")


class CallEnded(Exception):
    """The call's coroutine was cancelled: its deadline passed (deadline is True) or
    the host gave up on the call."""

    def __init__(self, deadline: bool) -> None:
        super().__init__("context deadline exceeded" if deadline else "context canceled")
        self.deadline = deadline


def drive(coro: Any) -> Any:
    """Run a coroutine that awaits nothing to its end on this thread and return its
    value. RuntimeError when it suspends (it awaited something after all)."""
    try:
        coro.send(None)
    except StopIteration as e:
        return e.value
    coro.close()
    raise RuntimeError("a coroutine expected to await nothing suspended")


class PluginLoop:
    """An asyncio event loop running forever in its own daemon thread, started on
    first use. run() runs a call's coroutine on it and waits for it; submit()
    starts one without waiting (DeferredTask)."""

    def __init__(self, name: str = "exocortex-asyncio") -> None:
        self.name = name
        self._lock = threading.Lock()
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._thread: Optional[threading.Thread] = None
        self._closed = False
        # Strong references to the tasks started on the loop, until they end.
        self._tasks: Dict[asyncio.Task, str] = {}

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._closed:
                raise RuntimeError(f"the event loop {self.name} is closed: the plugin is shutting down")
            if self._loop is None:
                loop = asyncio.new_event_loop()
                loop.set_task_factory(self._task_factory)
                started = threading.Event()

                def run() -> None:
                    asyncio.set_event_loop(loop)
                    loop.call_soon(started.set)
                    loop.run_forever()

                self._thread = threading.Thread(target=run, name=self.name, daemon=True)
                self._thread.start()
                started.wait()
                self._loop = loop
                _register(self)
            return self._loop

    def _task_factory(self, loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> asyncio.Task:
        task = asyncio.Task(coro, loop=loop, **kwargs)
        where = origin.get()
        name = getattr(coro, "__qualname__", type(coro).__name__)
        self._tasks[task] = f"{name} (started by {where})" if where else name
        task.add_done_callback(self._forget)
        return task

    def _forget(self, task: asyncio.Task) -> None:
        self._tasks.pop(task, None)

    def in_loop_thread(self) -> bool:
        return self._thread is not None and threading.current_thread() is self._thread

    def submit(self, coro: Any, where: str = "") -> "concurrent.futures.Future[Any]":
        """Start coro on the loop and return its future, without waiting. where
        names the call starting it (origin): the tasks coro starts are named after it."""
        loop = self.loop
        ctx = contextvars.copy_context()
        if where:
            ctx.run(origin.set, where)
        # The loop's callback, and so the task, takes the context it is
        # scheduled from: ctx, with origin set.
        return ctx.run(asyncio.run_coroutine_threadsafe, coro, loop)

    def run(self, coro: Any, where: str = "", rpc: Any = None) -> Any:
        """Run coro on the loop and wait for its value (or exception). rpc answers
        time_remaining() (seconds, None for no deadline) and is_active(): when the
        deadline passes or the host gives up, coro is cancelled and CallEnded is
        raised. Called from the loop's own thread (a call made by a task), coro
        cannot be waited for there: RuntimeError."""
        if self.in_loop_thread():
            coro.close()
            raise RuntimeError("a hook call was made from a task on the plugin's event loop, which cannot wait "
                               "for it: await the coroutine instead")
        fut = self.submit(coro, where)
        while True:
            left = _remaining(rpc)
            timeout = POLL if left is None else max(0.0, min(POLL, left))
            try:
                return fut.result(timeout)
            except concurrent.futures.TimeoutError:
                pass
            except concurrent.futures.CancelledError:
                raise CallEnded(False) from None
            left = _remaining(rpc)
            if left is not None and left <= 0:
                fut.cancel()
                raise CallEnded(True)
            if rpc is not None and not rpc.is_active():
                fut.cancel()
                raise CallEnded(False)

    def pending(self) -> List[str]:
        """What the tasks that have not finished are, by name (from any thread)."""
        loop = self._loop
        if loop is None or loop.is_closed():
            return []
        if self.in_loop_thread():
            return sorted(self._tasks[t] for t in list(self._tasks) if not t.done())
        try:
            return asyncio.run_coroutine_threadsafe(_call(lambda: self.pending()), loop).result(5)
        except (concurrent.futures.TimeoutError, RuntimeError):
            return []

    def close(self, grace: float = CLOSE_GRACE) -> List[str]:
        """Cancel every pending task, give them grace seconds to unwind, stop and
        close the loop; return the names of the tasks cancelled. Idempotent."""
        with self._lock:
            if self._closed:
                return []
            self._closed = True
            loop, thread = self._loop, self._thread
        _unregister(self)
        if loop is None or thread is None:
            return []

        async def cancel_all() -> List[str]:
            me = asyncio.current_task()
            tasks = [t for t in list(self._tasks) if t is not me and not t.done()]
            names = sorted(self._tasks.get(t, "?") for t in tasks)
            for t in tasks:
                t.cancel()
            if tasks:
                await asyncio.wait(tasks, timeout=grace)
            await loop.shutdown_asyncgens()
            return names

        names: List[str] = []
        try:
            names = asyncio.run_coroutine_threadsafe(cancel_all(), loop).result(grace + 5)
        except (concurrent.futures.TimeoutError, RuntimeError):
            pass
        loop.call_soon_threadsafe(loop.stop)
        thread.join(grace + 5)
        if not thread.is_alive():
            # A task still pending here ignored its cancellation: let it go quietly
            # (its "destroyed but pending" message would only repeat what was logged).
            for t in list(self._tasks):
                try:
                    t._log_destroy_pending = False  # noqa: SLF001 - asyncio's own switch for that message
                except AttributeError:
                    pass
            self._tasks.clear()
            loop.close()
        return names


async def _call(fn: Callable[[], Any]) -> Any:
    return fn()


def _remaining(rpc: Any) -> Optional[float]:
    if rpc is None:
        return None
    left = rpc.time_remaining()
    return None if left is None or left > 1e9 else left  # gRPC answers "forever" with a huge number


# Every loop started in this process, for close_all(). The list is the process's
# by nature (the loops are), like the threads they run on.
_all: List[PluginLoop] = []
_all_lock = threading.Lock()


def _register(pl: PluginLoop) -> None:
    with _all_lock:
        if pl not in _all:
            _all.append(pl)


def _unregister(pl: PluginLoop) -> None:
    with _all_lock:
        if pl in _all:
            _all.remove(pl)


def close_all(logger: Any = None, grace: float = CLOSE_GRACE) -> List[str]:
    """Close every event loop of the process (the plugin's and DeferredTask's
    named ones), cancelling their pending tasks; log what was cancelled, on logger
    (exocortex.log.Logger) when given, and return it."""
    with _all_lock:
        loops = list(_all)
    cancelled: List[str] = []
    for pl in loops:
        names = pl.close(grace)
        cancelled += names
        if logger is not None and names:
            logger.info(f"shutting down: cancelled {len(names)} pending task(s) on {pl.name}: " + "; ".join(names),
                        loop=pl.name, cancelled=len(names))
    return cancelled


__all__ = ["CallEnded", "PluginLoop", "close_all", "drive", "origin"]
