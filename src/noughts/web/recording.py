"""Scores and history for the web game: the rooms' matches record through one thread of its own.

A match records its finished game itself, exactly once, through the store it is given. The
web gives each room's match a :class:`RoomRecording`: it hands the game to the
:class:`Recorder` and returns at once, so the event loop never waits for the database (a
store's connection belongs to the thread that opened it, and a commit waits for the disk or
the server). When the game is kept, the room is told (the ``recorded`` and ``scores`` messages).

The recorder's thread keeps games in batches: every game waiting when it is free, or arriving
within ``gather`` seconds (200 ms) of a game that came alone (or until half a batch waits),
goes into one transaction (up to ``batch``; a commit and the scores read cost about 1.3 ms of
CPU however few games), and the ``scores`` message is read once per batch, with only the
leading names (an index, not the whole people table). At most ``batch`` finished games are
ever waiting or being written, so a ``SIGKILL`` loses at most that many:

- a change that ends a game first takes a place for it (:meth:`Recorder.reserve`, awaited before
  the room is stored); when all ``batch`` places are taken, that one change waits for the database
  to catch up, and only it: the event loop goes on serving every other move (back-pressure on
  whoever ends a game, not on everyone);
- if no place comes free within ``wait`` seconds (the database is stuck or gone), the game is
  not kept and its players are told so in the ``recorded`` message, as are those of every game
  that ends until the database has caught up again; the log says so once;
- :meth:`Recorder.stop` (the server's shutdown, on ``SIGTERM`` or Ctrl-C) writes every waiting
  game before it returns.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from noughts.errors import NoughtsError
from noughts.store import Finished, Recorded, Store, StoreError

if TYPE_CHECKING:

    from noughts.game import Game
    from noughts.store import Participant

__all__ = ["DEFAULT_BATCH", "Recorder", "RoomRecording", "Saved"]

Saved = Callable[[str, dict[str, Any], dict[str, Any] | None], None]  # room code, `recorded`, new `scores`
DEFAULT_BATCH = 100  # games per transaction, and the most finished games not yet committed
DEFAULT_WAIT_S = 5.0  # how long a game's end waits for room in a full queue before it is given up
# After a game arrives, the thread waits this long for others to share its commit: a commit and
# the scores read cost about 1.3 ms of CPU alone, 40 µs a game in tens (docs/web-protocol.md, Load).
# 200 ms rather than 50: the recorder's CPU a move is a third (about 55 µs less a move at 600 games),
# and a SIGKILL loses a few more of the games ended just before it (still never more than ``batch``).
DEFAULT_GATHER_S = 0.2
GATHER_SLICE_S = 0.025  # while gathering, how often the thread looks whether half a batch is waiting
_STOP_WAIT_S = 120.0  # the most the shutdown waits for the waiting games to be written
NOT_KEEPING_UP = "The score database is not keeping up, so this game was not saved."


class _Waiting:
    __slots__ = ("code", "finished", "saved")

    def __init__(self, code: str, finished: Finished, saved: Saved) -> None:
        self.code, self.finished, self.saved = code, finished, saved


class Recorder:
    """The score store, opened and written by one thread of its own, never on the event loop."""

    def __init__(self, db: str | None = None, enabled: bool = True, notify: Callable[[str], None] | None = None,
                 *, batch: int = DEFAULT_BATCH, wait: float = DEFAULT_WAIT_S,
                 gather: float = DEFAULT_GATHER_S) -> None:
        if batch < 1:
            raise ValueError("a batch holds at least one game")
        self.db, self.enabled, self.batch, self.wait = db, enabled, batch, wait
        self.gather = gather
        self.notify = notify or (lambda line: print(f"noughts web: {line}", file=sys.stderr))
        self.scores: dict[str, Any] = scores_message(None)
        self._store: Store | None = None
        self._queue: queue.SimpleQueue[_Waiting | None] = queue.SimpleQueue()
        self._free = batch  # places for finished games not yet committed (counted on the event loop)
        self._waiters: deque[asyncio.Future[None]] = deque()  # changes waiting for a place, first come first served
        self._later: set[asyncio.Task[None]] = set()  # games that came without a place, waiting for one
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stuck = False  # the last game waited in vain: give up at once until the database catches up
        self._stopping = False

    # lifecycle ------------------------------------------------------------------------------
    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        opened: asyncio.Future[dict[str, Any]] = self._loop.create_future()
        self._thread = threading.Thread(target=self._work, args=(opened,), name="noughts-db", daemon=True)
        self._thread.start()
        self.scores = await opened

    async def stop(self) -> None:
        """Write every game still waiting, then close the store (the server's shutdown)."""
        if self._thread is None or self._stopping:
            return
        self._stopping = True
        for place in self._waiters:  # changes still waiting for a place: their games are not kept
            place.cancel()
        for task in list(self._later):
            with contextlib.suppress(Exception):
                await task
        self._queue.put(None)
        thread = self._thread
        await asyncio.get_running_loop().run_in_executor(None, thread.join, _STOP_WAIT_S)
        if thread.is_alive():
            self.notify(f"the score database did not take the last games within {_STOP_WAIT_S:.0f} s; "
                        "some finished games were not saved")

    # the event loop's side ----------------------------------------------------------------------
    def for_room(self, code: str, saved: Saved) -> RoomRecording:
        """The store a room's match records through; ``saved`` hears when each game is kept."""
        return RoomRecording(self, code, saved)

    @property
    def waiting(self) -> int:
        """Finished games taken and not yet committed (at most ``batch``)."""
        return self.batch - self._free

    async def reserve(self) -> str | None:
        """Take a place for one finished game, awaiting one if all are taken; or say why it cannot be kept.

        Only the awaiting coroutine waits (at most ``wait`` seconds): the event loop serves
        everything else meanwhile. A place taken must be used (``write_later(..., reserved=True)``)
        or given back (:meth:`give_back`).
        """
        why = self._closed()
        if why is not None:
            return why
        if self._free > 0 and not self._waiters:
            self._free -= 1
            return None
        if self._stuck:
            return NOT_KEEPING_UP
        assert self._loop is not None
        place: asyncio.Future[None] = self._loop.create_future()
        self._waiters.append(place)
        try:
            await asyncio.wait({place}, timeout=self.wait)  # never cancels the place itself
        except BaseException:  # this coroutine was cancelled: a place given meanwhile goes back
            if place.done() and not place.cancelled():
                self.give_back(1)
            place.cancel()
            raise
        finally:
            with contextlib.suppress(ValueError):
                self._waiters.remove(place)
        if place.cancelled():  # the shutdown came first
            return "The server is stopping, so this game was not saved."
        if place.done():
            return None
        place.cancel()
        if not self._stuck:
            self._stuck = True
            self.notify(f"the score database has not kept up for {self.wait:g} s; finished games are not "
                        "saved until it does (their players are told)")
        return NOT_KEEPING_UP

    def give_back(self, places: int) -> None:
        """Places taken by :meth:`reserve` and not used (the change was not stored), or freed by a commit."""
        self._free += places
        while self._free > 0 and self._waiters:
            place = self._waiters.popleft()
            if not place.done():
                self._free -= 1
                place.set_result(None)

    def write_later(self, code: str, game: Game, x: Participant, o: Participant, saved: Saved,
                    game_key: str | None = None, *, reserved: bool = False, refused: str | None = None) -> None:
        """Keep a finished game on the recorder's thread; ``saved`` is called on the event loop after.

        ``reserved``: a place was taken for it (:meth:`reserve`); ``refused``: :meth:`reserve`
        said why it cannot be kept (the players are told). Otherwise it takes a free place, or
        waits for one on a task of its own: this never blocks. Raises :class:`StoreError` for a
        game that cannot be kept (not over, a bad key); a place reserved for it is then given back.
        """
        try:
            finished = Finished(game, x, o, game_key=game_key)
        except BaseException:
            if reserved:
                self.give_back(1)
            raise
        why = refused
        if why is None and not reserved:
            why = self._closed()
            if why is None and (self._free <= 0 or self._waiters):
                assert self._loop is not None
                task = self._loop.create_task(self._write_when_free(_Waiting(code, finished, saved)))
                self._later.add(task)
                task.add_done_callback(self._later.discard)
                return
            if why is None:
                self._free -= 1
        if why is None and self._stopping:
            self.give_back(1)
            why = "The server is stopping, so this game was not saved."
        if why is not None:
            assert self._loop is not None
            self._loop.call_soon(saved, code, {"type": "recorded", "game_id": None, "message": why,
                                               "summary": ""}, None)
            return
        self._queue.put(_Waiting(code, finished, saved))

    async def _write_when_free(self, waiting: _Waiting) -> None:
        why = await self.reserve()
        if why is None and self._stopping:
            self.give_back(1)
            why = "The server is stopping, so this game was not saved."
        if why is not None:
            waiting.saved(waiting.code, {"type": "recorded", "game_id": None, "message": why, "summary": ""}, None)
            return
        self._queue.put(waiting)

    def _closed(self) -> str | None:
        if self._thread is None:
            return "The score store has not been started."
        if self._stopping:
            return "The server is stopping, so this game was not saved."
        return None

    def _deliver(self, done: list[tuple[_Waiting, dict[str, Any]]], scores: dict[str, Any] | None) -> None:
        self._stuck = False
        self.give_back(len(done))
        if scores is not None:
            self.scores = scores
        for waiting, message in done:
            waiting.saved(waiting.code, message, scores)

    # the recorder's thread --------------------------------------------------------------------
    def _work(self, opened: asyncio.Future[dict[str, Any]]) -> None:
        assert self._loop is not None
        loop = self._loop
        try:
            scores = self._open()
        except BaseException as error:  # handed to the event loop, which raises it in start()
            loop.call_soon_threadsafe(opened.set_exception, error)
            return
        loop.call_soon_threadsafe(opened.set_result, scores)
        store = self._store
        assert store is not None
        try:
            running = True
            while running:
                first = self._queue.get()
                if first is not None and self.gather > 0 and self._queue.empty():
                    self._gather()
                if first is None:
                    break
                batch = [first]
                while len(batch) < self.batch:  # whatever else is waiting goes in the same transaction
                    try:
                        more = self._queue.get_nowait()
                    except queue.Empty:
                        break
                    if more is None:
                        running = False
                        break
                    batch.append(more)
                done, scores_now = self._write(store, batch)
                with contextlib.suppress(RuntimeError):  # the event loop is gone (the process ends): games are kept
                    loop.call_soon_threadsafe(self._deliver, done, scores_now)
        finally:
            store.close()

    def _gather(self) -> None:
        """A game came alone: wait up to ``gather`` seconds for others to share its commit, but no longer
        than it takes half a batch to arrive, so games ending meanwhile still find places (under load a
        fixed wait would hold every place and make the games that end wait). (A stop's None ends the
        batch as soon as it is read.)"""
        deadline = time.monotonic() + self.gather
        enough = max(1, self.batch // 2)
        while self._queue.qsize() < enough:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            time.sleep(min(left, GATHER_SLICE_S))

    def _open(self) -> dict[str, Any]:
        from noughts.store import open_store

        if self.enabled:
            self._store = open_store(self.db)
        else:
            self._store = Store.disabled("Scores and history are off for this server.")
        for line in self._store.notices:
            self.notify(line)
        return scores_message(self._store)

    @staticmethod
    def _write(store: Store, batch: list[_Waiting]) -> tuple[list[tuple[_Waiting, dict[str, Any]]],
                                                             dict[str, Any] | None]:
        if not store.enabled:
            off = {"type": "recorded", "game_id": None, "message": store.reason, "summary": ""}
            return [(waiting, off) for waiting in batch], None
        answers = store.record_many([waiting.finished for waiting in batch])
        done: list[tuple[_Waiting, dict[str, Any]]] = []
        for waiting, answer in zip(batch, answers, strict=True):
            if isinstance(answer, StoreError):  # disk full, server gone, a key clash: the game goes on regardless
                done.append((waiting, {"type": "recorded", "game_id": None, "message": " ".join(str(answer).split()),
                                       "summary": ""}))
            else:
                done.append((waiting, {"type": "recorded", "game_id": answer.game_id, "points": answer.points,
                                       "run": answer.run, "difficulty": answer.difficulty,
                                       "high_score": answer.high_score, "new_high_score": answer.new_high_score,
                                       "summary": answer.summary()}))
        try:
            scores = scores_message(store)
        except NoughtsError:
            scores = None
        return done, scores


class RoomRecording:
    """What a room's match records through: the write goes to the recorder's thread, the game goes on.

    The match calls :meth:`record` once when a game ends, on the event loop; this returns at
    once with a :class:`~noughts.store.Recorded` that has no game number yet (the match then
    counts the game as kept), and the room hears the number in the ``recorded`` message.
    Whether scores are on is the recorder's business: a disabled store's reason reaches the
    players the same way.
    """

    def __init__(self, recorder: Recorder, code: str, saved: Saved) -> None:
        self._recorder, self._code, self._saved = recorder, code, saved

    @property
    def enabled(self) -> bool:
        return True

    def record(self, game: Game, x: Participant, o: Participant, *, game_key: str | None = None) -> Recorded:
        self._recorder.write_later(self._code, game, x, o, self._saved, game_key)
        return Recorded(None)

    def keep(self, game: Game, x: Participant, o: Participant, game_key: str | None, *, reserved: bool,
             refused: str | None) -> None:
        """A game whose place was taken beforehand (``reserved``), or refused one (``refused`` says why)."""
        self._recorder.write_later(self._code, game, x, o, self._saved, game_key, reserved=reserved, refused=refused)

    def __repr__(self) -> str:
        return f"<RoomRecording {self._code}>"


def scores_message(store: Store | None) -> dict[str, Any]:
    """The ``scores`` message from a store (all zero when scores are off): the ten people with most wins."""
    if store is None or not store.enabled:
        return {"type": "scores", "enabled": False, "run": 0, "high": {"easy": 0, "medium": 0, "hard": 0},
                "opponents": {}, "people": []}
    scores = store.scores(top_people=10)
    return {
        "type": "scores", "enabled": True, "run": scores.run, "high": scores.high,
        "opponents": {name: {"wins": t.wins, "losses": t.losses, "draws": t.draws}
                      for name, t in scores.opponents.items()},
        "people": [{"name": name, "wins": t.wins, "losses": t.losses, "draws": t.draws}
                   for name, t in scores.people.items()],
    }
