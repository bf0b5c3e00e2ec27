"""Scores and history for the web game: the rooms' matches record through one thread of its own.

A match records its finished game itself, exactly once, through the store it is given. The
web gives each room's match a :class:`RoomRecording`: it hands the write to the
:class:`Recorder`'s thread and returns at once, so the event loop never waits for SQLite
(a store's connection belongs to the thread that opened it, and a write waits for fsync).
When the write is done, the room is told (the ``recorded`` and ``scores`` messages).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from noughts.store import Recorded, Store

if TYPE_CHECKING:

    from noughts.game import Game
    from noughts.store import Participant

__all__ = ["Recorder", "RoomRecording", "Saved"]

Saved = Callable[[str, dict[str, Any], dict[str, Any] | None], None]  # room code, `recorded`, new `scores`


class Recorder:
    """The score store, opened and written by one worker thread, never on the event loop."""

    def __init__(self, db: str | None = None, enabled: bool = True,
                 notify: Callable[[str], None] | None = None) -> None:
        self.db, self.enabled = db, enabled
        self.notify = notify or (lambda line: print(f"noughts web: {line}", file=sys.stderr))
        self.scores: dict[str, Any] = scores_message(None)
        self._store: Store | None = None
        self._executor: ThreadPoolExecutor | None = None
        self._writes: set[asyncio.Task[None]] = set()  # games being saved

    async def start(self) -> None:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="noughts-db")
        self.scores = await self._run(self._open)

    def _open(self) -> dict[str, Any]:
        from noughts.store import open_store

        if self.enabled:
            self._store = open_store(self.db)
        else:
            self._store = Store.disabled("Scores and history are off for this server.")
        for line in self._store.notices:
            self.notify(line)
        return scores_message(self._store)

    async def _run(self, work: Callable[[], Any]) -> Any:
        assert self._executor is not None, "the recorder has not been started"
        return await asyncio.get_running_loop().run_in_executor(self._executor, work)

    def for_room(self, code: str, saved: Saved) -> RoomRecording:
        """The store a room's match records through; ``saved`` hears when each game is kept."""
        return RoomRecording(self, code, saved)

    def write_later(self, code: str, game: Game, x: Participant, o: Participant, saved: Saved,
                    game_key: str | None = None) -> None:
        """Keep a finished game on the recorder's thread; ``saved`` is called on the event loop after."""
        task = asyncio.get_running_loop().create_task(self._save(code, game, x, o, saved, game_key))
        self._writes.add(task)  # a task nobody references can be garbage-collected mid-flight
        task.add_done_callback(self._writes.discard)

    async def _save(self, code: str, game: Game, x: Participant, o: Participant, saved: Saved,
                    game_key: str | None) -> None:
        message, scores = await self._run(lambda: self._write(game, x, o, game_key))
        if scores is not None:
            self.scores = scores
        saved(code, message, scores)

    def _write(self, game: Game, x: Participant, o: Participant,
               game_key: str | None) -> tuple[dict[str, Any], dict[str, Any] | None]:
        from noughts.errors import NoughtsError

        assert self._store is not None
        if not self._store.enabled:
            return {"type": "recorded", "game_id": None, "message": self._store.reason, "summary": ""}, None
        try:
            done = self._store.record(game, x, o, game_key=game_key)
        except NoughtsError as error:  # disk full, locked too long: the game goes on regardless
            return {"type": "recorded", "game_id": None, "message": " ".join(str(error).split()),
                    "summary": ""}, None
        return ({"type": "recorded", "game_id": done.game_id, "points": done.points, "run": done.run,
                 "difficulty": done.difficulty, "high_score": done.high_score,
                 "new_high_score": done.new_high_score, "summary": done.summary()}, scores_message(self._store))

    async def stop(self) -> None:
        if self._executor is None:
            return
        if self._writes:  # a game that ended just before the stop is still saved
            await asyncio.wait(list(self._writes), timeout=15)
        if self._store is not None:
            await self._run(self._store.close)
        self._executor.shutdown(wait=True)
        self._executor = None


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
    """The ``scores`` message from a store (all zero when scores are off)."""
    if store is None or not store.enabled:
        return {"type": "scores", "enabled": False, "run": 0, "high": {"easy": 0, "medium": 0, "hard": 0},
                "opponents": {}, "people": []}
    scores = store.scores()
    people = sorted(scores.people.items(), key=lambda item: (-item[1].wins, item[0]))[:10]
    return {
        "type": "scores", "enabled": True, "run": scores.run, "high": scores.high,
        "opponents": {name: {"wins": t.wins, "losses": t.losses, "draws": t.draws}
                      for name, t in scores.opponents.items()},
        "people": [{"name": name, "wins": t.wins, "losses": t.losses, "draws": t.draws} for name, t in people],
    }
