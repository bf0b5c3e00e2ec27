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

A store that fails is opened again, never given up: when it cannot be opened (PostgreSQL down at
start, a folder that cannot be written) or a write fails (the server gone, the database dropped
and made again, a full disk), the thread keeps the games in memory (at most ``backlog``; those
ending past that are not saved, counted and logged) and their players are told the game will be
saved later; it opens the store again after 0.5 s, then 1, 2 … up to 30 s between tries, which
runs the migrations again (a recreated database gets its tables), and writes the games that
waited. Meanwhile the places of the ``batch`` are free again, so games go on ending at once; a
``SIGKILL`` then loses the games waiting in memory. :meth:`Recorder.health` says how the store
is (``/healthz``), and the server's log has one line per cause per ``log_every`` seconds, with
counts. Players never read where the store is or what the database said: that is for the log.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import queue
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from noughts import text
from noughts.errors import NoughtsError
from noughts.store import Finished, Recorded, Store, StoreError, StoreUnavailable

if TYPE_CHECKING:

    from noughts.game import Game
    from noughts.store import Participant

__all__ = ["DEFAULT_BACKLOG", "DEFAULT_BATCH", "STORE_OFF", "STORE_OK", "STORE_RETRYING", "Recorder", "RoomRecording",
           "Saved"]

# A logger of its own: the recorder says each cause once per interval itself (_FailureLog); the
# LogLimiter on "noughts.web" (one line per message pattern) would merge different causes into one.
log = logging.getLogger("noughts.web.store")

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
NOT_KEEPING_UP = text.STORE_NOT_KEEPING_UP
# While the store is down, finished games wait in memory: 5,000 games of a few kB each (their moves,
# players and room) stay well under the server's memory; past that they are not saved (counted, logged).
DEFAULT_BACKLOG = 5_000
RETRY_FIRST_S, RETRY_MOST_S = 0.5, 30.0  # the store is opened again after this, doubling up to the most
LOG_EVERY_S = 60.0  # one log line per cause of failed saves per this many seconds
STORE_OK, STORE_RETRYING, STORE_OFF = "ok", "retrying", "off"  # the store's state, as /healthz says it


class _Waiting:
    __slots__ = ("code", "finished", "saved")

    def __init__(self, code: str, finished: Finished, saved: Saved) -> None:
        self.code, self.finished, self.saved = code, finished, saved


class Recorder:
    """The score store, opened and written by one thread of its own, never on the event loop."""

    def __init__(self, db: str | None = None, enabled: bool = True, notify: Callable[[str], None] | None = None,
                 *, batch: int = DEFAULT_BATCH, wait: float = DEFAULT_WAIT_S, gather: float = DEFAULT_GATHER_S,
                 backlog: int = DEFAULT_BACKLOG, retry_first: float = RETRY_FIRST_S, retry_most: float = RETRY_MOST_S,
                 log_every: float = LOG_EVERY_S) -> None:
        if batch < 1:
            raise ValueError("a batch holds at least one game")
        self.db, self.enabled, self.batch, self.wait = db, enabled, batch, wait
        self.gather = gather
        self.backlog, self.retry_first, self.retry_most = backlog, retry_first, retry_most
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
        # the thread's own: games kept in memory while the store is down, and when to open it again
        self.state = STORE_OFF  # STORE_OK, STORE_RETRYING (down: games wait in memory) or STORE_OFF (scores off)
        self.lost = 0  # finished games given up since the start: the memory queue was full, or the server stopped
        self._held: deque[_Waiting] = deque()
        self._delay = retry_first
        self._retry_at = 0.0
        self._failures = _FailureLog(log_every)

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

    def health(self) -> dict[str, Any]:
        """How the store is, for ``/healthz``: ``status`` is "degraded" while the store is being retried,
        ``waiting`` the finished games not yet saved (in the queue and in memory), ``lost`` those given up."""
        state = self.state
        return {"status": "degraded" if state == STORE_RETRYING else "ok", "store": state,
                "waiting": self.waiting + len(self._held), "lost": self.lost}

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
            return text.SERVER_STOPPING_NOT_SAVED
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
            why = text.SERVER_STOPPING_NOT_SAVED
        if why is not None:
            assert self._loop is not None
            self._loop.call_soon(saved, code, not_saved(why), None)
            return
        self._queue.put(_Waiting(code, finished, saved))

    async def _write_when_free(self, waiting: _Waiting) -> None:
        why = await self.reserve()
        if why is None and self._stopping:
            self.give_back(1)
            why = text.SERVER_STOPPING_NOT_SAVED
        if why is not None:
            waiting.saved(waiting.code, not_saved(why), None)
            return
        self._queue.put(waiting)

    def _closed(self) -> str | None:
        if self._thread is None:
            return text.SCORES_NOT_STARTED
        if self._stopping:
            return text.SERVER_STOPPING_NOT_SAVED
        return None

    def _deliver(self, done: list[tuple[_Waiting, dict[str, Any]]], scores: dict[str, Any] | None) -> None:
        self._stuck = False
        self.give_back(len(done))
        if scores is not None:
            self.scores = scores
        for waiting, message in done:
            waiting.saved(waiting.code, message, scores)

    def _set_scores(self, scores: dict[str, Any]) -> None:
        self.scores = scores

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
        try:
            running = True
            while running:
                if self.state == STORE_RETRYING:
                    running = self._while_down()
                    continue
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
                self._keep(batch)
            if self._held:  # stopping while the store is down: one last try
                self._open_again()
            if self._held:
                self.lost += len(self._held)
                log.error("score store: %d finished games that waited in memory were not saved: the server stopped "
                          "before the store came back", len(self._held))
        finally:
            if self._store is not None:
                self._store.close()

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
        """Open the store (at the start); one that cannot be opened is tried again later, not given up."""
        if not self.enabled:
            self._store = Store.disabled(text.SCORES_OFF_FOR_SERVER)
            self.state = STORE_OFF
            return scores_message(None)
        store = self._opened()
        if store.enabled:
            self.state = STORE_OK
        else:
            self._down(store.reason or "the store cannot be opened", 0)
        return scores_message(store)

    def _opened(self) -> Store:
        from noughts.store import open_store

        try:
            store = open_store(self.db)
        except NoughtsError as error:  # open_store turns the store's problems into a disabled store; this is a bad name
            store = Store.disabled(str(error))
        for line in store.notices:
            if line != store.reason:  # a file moved aside, say; why it is off goes to the failure log
                self.notify(line)
        self._store = store
        return store

    def _keep(self, batch: list[_Waiting]) -> None:
        """Write a batch and tell its rooms; if the store fails, the games wait in memory for it."""
        assert self._store is not None
        try:
            done, scores = self._write(self._store, batch)
        except StoreUnavailable as error:
            self._hold(batch)
            self._down(error.cause, len(batch))
            return
        except Exception as error:  # whatever else the database client throws: the games are not lost
            log.exception("score store: writing %d finished games failed", len(batch))
            self._hold(batch)
            self._down(type(error).__name__, len(batch))
            return
        self._hand_back(done, scores)

    def _hand_back(self, done: list[tuple[_Waiting, dict[str, Any]]], scores: dict[str, Any] | None) -> None:
        assert self._loop is not None
        with contextlib.suppress(RuntimeError):  # the event loop is gone (the process ends): games are kept
            self._loop.call_soon_threadsafe(self._deliver, done, scores)

    def _hold(self, batch: list[_Waiting]) -> None:
        """Keep games in memory until the store is back; their players are told, their places freed."""
        told = []
        for waiting in batch:
            if len(self._held) < self.backlog:
                self._held.append(waiting)
                told.append((waiting, not_saved(text.GAME_SAVED_LATER)))
            else:
                self.lost += 1
                self._failures.failed(f"the memory queue of {self.backlog} games is full, so finished games are not "
                                      "saved", 1, len(self._held), self._retry_at)
                told.append((waiting, not_saved(text.GAME_NOT_SAVED)))
        self._hand_back(told, None)

    def _down(self, cause: str, games: int) -> None:
        """The store failed: try again after the current delay, doubling it up to ``retry_most``."""
        self.state = STORE_RETRYING
        self._retry_at = time.monotonic() + self._delay
        self._failures.failed(cause, games, len(self._held), self._retry_at)
        self._delay = min(self._delay * 2, self.retry_most)

    def _while_down(self) -> bool:
        """Take in the games that end until it is time to open the store again, then try; False: stop."""
        while True:
            left = self._retry_at - time.monotonic()
            if left <= 0:
                break
            try:
                first = self._queue.get(timeout=left)
            except queue.Empty:
                break
            batch, stopping = [first], first is None
            while not stopping:
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                batch.append(more)
                stopping = more is None
            self._hold([waiting for waiting in batch if waiting is not None])
            if stopping:
                return False
        self._open_again()
        return True

    def _open_again(self) -> None:
        """Open the store again (its migrations make tables that went missing) and write the games that waited."""
        if self._store is not None:
            self._store.close()
        store = self._opened()
        if not store.enabled:
            self._down(store.reason or "the store cannot be opened", 0)
            return
        saved = 0
        while self._held:
            batch = [self._held[n] for n in range(min(self.batch, len(self._held)))]
            try:
                self._write(store, batch)  # their players were told they will be saved; the scores follow
            except StoreUnavailable as error:
                self._down(error.cause, 0)
                return
            except Exception as error:
                log.exception("score store: writing %d finished games failed", len(batch))
                self._down(type(error).__name__, 0)
                return
            for _ in batch:
                self._held.popleft()
            saved += len(batch)
        self.state = STORE_OK
        self._delay = self.retry_first
        self._failures.recovered(saved)
        try:
            scores = scores_message(store)
        except NoughtsError:
            return
        assert self._loop is not None
        with contextlib.suppress(RuntimeError):
            self._loop.call_soon_threadsafe(self._set_scores, scores)

    @staticmethod
    def _write(store: Store, batch: list[_Waiting]) -> tuple[list[tuple[_Waiting, dict[str, Any]]],
                                                             dict[str, Any] | None]:
        """Write a batch; raises :class:`StoreUnavailable` when the database failed and kept none of it."""
        if not store.enabled:
            off = not_saved(text.SCORES_OFF_FOR_SERVER)
            return [(waiting, off) for waiting in batch], None
        answers = store.record_many([waiting.finished for waiting in batch])
        for answer in answers:
            if isinstance(answer, StoreUnavailable):
                raise answer
        done: list[tuple[_Waiting, dict[str, Any]]] = []
        for waiting, answer in zip(batch, answers, strict=True):
            if isinstance(answer, StoreError):  # a key given to a different game: this one is not kept
                log.warning("score store: a finished game of room %s was not saved: %s", waiting.code,
                            " ".join(str(answer).split()))
                done.append((waiting, not_saved(text.GAME_NOT_SAVED)))
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


class _FailureLog:
    """Failed saves in the server's log: one line per cause per ``every`` seconds, with counts, and one
    when the store is back (a down database fails every game: a line each would bury everything else)."""

    def __init__(self, every: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.every, self.clock = every, clock
        self._causes: dict[str, list[float]] = {}  # cause -> [when last logged, tries since, games since]
        self._down_since: float | None = None

    def failed(self, cause: str, games: int, waiting: int, retry_at: float) -> None:
        now = self.clock()
        if self._down_since is None:
            self._down_since = now
        if len(self._causes) > 100:  # causes with changing details: forget, do not grow
            self._causes.clear()
        seen = self._causes.setdefault(cause, [-math.inf, 0, 0])
        seen[1] += 1
        seen[2] += games
        if now - seen[0] < self.every:
            return
        log.warning("score store: %s (%d %s, %d finished %s not saved yet, since the last line); %d %s in "
                    "memory; next try in %.1f s", " ".join(cause.split()), seen[1], "try" if seen[1] == 1 else "tries",
                    seen[2], "game" if seen[2] == 1 else "games", waiting, "waits" if waiting == 1 else "wait",
                    max(0.0, retry_at - now))
        seen[:] = [now, 0, 0]

    def recovered(self, saved: int) -> None:
        if self._down_since is not None:
            log.warning("score store: working again after %.0f s; %d finished games that waited in memory were saved",
                        self.clock() - self._down_since, saved)
        self._causes.clear()
        self._down_since = None


def not_saved(message: str) -> dict[str, Any]:
    """The ``recorded`` message of a game that was not kept (yet): ``message`` is a sentence from text.py."""
    return {"type": "recorded", "game_id": None, "message": message, "summary": ""}


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
