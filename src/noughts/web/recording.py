"""Scores and history for the web game: the rooms' matches record through one thread of its own.

A match records its finished game itself, exactly once, through the store it is given. The
web gives each room's match a :class:`RoomRecording`: it hands the game to the
:class:`Recorder` and returns at once, so the event loop never waits for the database (a
store's connection belongs to the thread that opened it, and a commit waits for the disk or
the server). When the game is kept, the room is told (the ``recorded`` and ``scores`` messages).

The recorder's thread keeps games in batches: every game waiting when it is free goes into one
transaction (up to ``batch``), and the ``scores`` message is read once per batch, with only the
leading names (an index, not the whole people table). At most ``batch`` finished games are ever
waiting or being written, so a ``SIGKILL`` loses at most that many:

- when that many are waiting, the end of the next game waits for the database to catch up
  (the event loop stops taking moves: back-pressure on every client, briefly);
- if it does not catch up within ``wait`` seconds (the database is stuck or gone), the game is
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
_STOP_WAIT_S = 120.0  # the most the shutdown waits for the waiting games to be written


class _Waiting:
    __slots__ = ("code", "finished", "saved")

    def __init__(self, code: str, finished: Finished, saved: Saved) -> None:
        self.code, self.finished, self.saved = code, finished, saved


class Recorder:
    """The score store, opened and written by one thread of its own, never on the event loop."""

    def __init__(self, db: str | None = None, enabled: bool = True, notify: Callable[[str], None] | None = None,
                 *, batch: int = DEFAULT_BATCH, wait: float = DEFAULT_WAIT_S) -> None:
        if batch < 1:
            raise ValueError("a batch holds at least one game")
        self.db, self.enabled, self.batch, self.wait = db, enabled, batch, wait
        self.notify = notify or (lambda line: print(f"noughts web: {line}", file=sys.stderr))
        self.scores: dict[str, Any] = scores_message(None)
        self._store: Store | None = None
        self._queue: queue.SimpleQueue[_Waiting | None] = queue.SimpleQueue()
        self._room = threading.Semaphore(batch)  # a place for each finished game not yet committed
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

    def write_later(self, code: str, game: Game, x: Participant, o: Participant, saved: Saved,
                    game_key: str | None = None) -> None:
        """Keep a finished game on the recorder's thread; ``saved`` is called on the event loop after.

        Raises :class:`StoreError` for a game that cannot be kept (not over, a bad key).
        """
        finished = Finished(game, x, o, game_key=game_key)
        why = self._refusal()
        if why is not None:
            assert self._loop is not None
            self._loop.call_soon(saved, code, {"type": "recorded", "game_id": None, "message": why,
                                               "summary": ""}, None)
            return
        self._queue.put(_Waiting(code, finished, saved))

    def _refusal(self) -> str | None:
        """Take a place in the queue (waiting for one if need be); or say why this game cannot be kept."""
        if self._thread is None:
            return "The score store has not been started."
        if self._stopping:
            return "The server is stopping, so this game was not saved."
        if self._room.acquire(blocking=False):
            return None
        if not self._stuck and self._room.acquire(timeout=self.wait):  # back-pressure: the game's end waits
            return None
        if not self._stuck:
            self._stuck = True
            self.notify(f"the score database has not kept up for {self.wait:g} s; finished games are not saved "
                        "until it does (their players are told)")
        return "The score database is not keeping up, so this game was not saved."

    def _deliver(self, done: list[tuple[_Waiting, dict[str, Any]]], scores: dict[str, Any] | None) -> None:
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
                for _ in batch:
                    self._room.release()
                self._stuck = False
                with contextlib.suppress(RuntimeError):  # the event loop is gone (the process ends): games are kept
                    loop.call_soon_threadsafe(self._deliver, done, scores_now)
        finally:
            store.close()

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
