"""Running something while its events are read: the async stream, and its sync twin.

:func:`stream_run` starts a run (a kickoff, an agent's task) as an asyncio task whose scope
a :class:`Listener` attaches to by run id, and yields the events it buffers, then the run's
result. The run and its reader are separate tasks on one loop: the run never waits for the
reader except through the buffer's back-pressure on model text.

Leaving the loop early (``break``, an exception, the reader's task cancelled) closes the
generator, and closing it cancels the run and waits for it to unwind: the scheduler
cancels its tasks, the run reports itself cancelled (a run store marks it so, and it can be
resumed). After a ``break`` Python closes an async generator when it is collected; wrap it in
``contextlib.aclosing`` to close it at the ``break`` itself.

:func:`iterate_sync` drives an async stream from sync code on a loop in a thread of its own,
one item per ``next``, so a plain ``for`` loop reads a streamed run with the same
back-pressure, and a ``break`` cancels it before the loop statement ends.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterator
from typing import Any, TypeVar

from crew.agent.scope import watch_run
from crew.stream.buffer import EventBuffer
from crew.stream.listen import Listener

__all__ = ["DEFAULT_BUFFER", "iterate_sync", "stream_run"]

T = TypeVar("T")

DEFAULT_BUFFER = 256
"""Events a stream holds before model text waits for its reader."""

_END = object()


async def stream_run(
    run_id: str,
    start: Callable[[], Awaitable[T]],
    *,
    buffer: int = DEFAULT_BUFFER,
    watch: Callable[[Listener, EventBuffer], Callable[[], None]] | None = None,
) -> AsyncGenerator[Any, None]:
    """Start ``start()`` (which must make the run ``run_id``), yield its events, then its result.

    The run's exception, if it raises, is raised here after the events that led to it.
    ``watch(listener, buffer)`` (a flow's stream) decides which runs the listener attaches
    to, and may put events of its own in the buffer; it is called just before the run starts,
    in the context the run inherits, and returns its remover. By default: the run ``run_id``.
    """
    events = EventBuffer(buffer)
    listener = Listener(events)
    if watch is None:
        unwatch = watch_run(run_id, listener.attach)
        run: asyncio.Future[T] = asyncio.ensure_future(start())
    else:
        unwatch = watch(listener, events)
        run = asyncio.ensure_future(start())
    run.add_done_callback(lambda _: events.put(_END))
    try:
        while True:
            item = await events.get()
            if item is _END:
                break
            yield item
        while len(events):  # what a worker thread handed over just before the end
            item = events.get_nowait()
            if item is not _END:
                yield item
        yield run.result()
    finally:
        unwatch()
        listener.detach()
        events.close()
        if not run.done():
            run.cancel()
            await asyncio.wait([run])  # unwound: no task of the run is left running
        elif not run.cancelled():
            run.exception()  # retrieved: a run whose reader left early logs no "never retrieved"


def iterate_sync(make: Callable[[], AsyncIterator[T]], *, thread_name: str = "crew-stream") -> Iterator[T]:
    """The items of the async iterator ``make()`` returns, read from sync code.

    The iterator runs on an event loop in a thread of its own, started on the first
    ``next`` and stopped when this generator ends (exhausted, ``break``, an exception).
    """
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name=thread_name, daemon=True)
    thread.start()
    stream = make()

    async def step() -> Any:
        try:
            return await stream.__anext__()
        except StopAsyncIteration:
            return _END

    try:
        while True:
            item = asyncio.run_coroutine_threadsafe(step(), loop).result()
            if item is _END:
                return
            yield item
    finally:
        closer = getattr(stream, "aclose", None)
        if closer is not None:
            asyncio.run_coroutine_threadsafe(closer(), loop).result()
        asyncio.run_coroutine_threadsafe(loop.shutdown_asyncgens(), loop).result()
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
        loop.close()
