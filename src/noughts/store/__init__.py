"""Scores and the history of finished games.

``scoring`` holds the rules (the EV3 robot's points, runs and high scores, kept per board, and
the win/loss/draw tallies) and the values the store hands out, with no SQL, so every backend
scores alike; ``base`` is the :class:`Store` interface and the SQL every backend shares, and
``schema`` the tables and their migrations. ``sqlite`` keeps them in a SQLite file (the
default: WAL with ``synchronous=FULL``, ``BEGIN IMMEDIATE`` with retries, damaged files moved
aside, never overwritten); ``postgresql`` in a PostgreSQL database that several processes and
machines share (psycopg 3, the ``postgres`` extra). :func:`open_store` picks the backend from
what it is given: a ``postgresql://`` URL, else a file path. Everything is importable from here.

>>> import tempfile, pathlib
>>> from noughts import Game
>>> folder = tempfile.TemporaryDirectory()
>>> store = open_store(pathlib.Path(folder.name) / "noughts.db")
>>> game = Game.replay("b2 a1 c3 a3 a2 c1 c2".split())
>>> game.result
'X'
>>> done = store.record(game, Participant.human("Ann"), Participant.computer("medium"), game_key="ann-1")
>>> done.points, done.run, done.high_score, done.new_high_score, done.board
(2, 2, 2, True, (3, 3, 3))
>>> store.record(game, Participant.human("Ann"), Participant.computer("medium"), game_key="ann-1") == done
True
>>> store.scores().opponents["medium"]
Tally(wins=1, losses=0, draws=0)
>>> store.scores().boards
{(3, 3, 3): BoardScores(run=2, high={'easy': 0, 'medium': 2, 'hard': 0})}
>>> store.game(done.game_id).to_game().moves == game.moves
True
>>> store.close(); folder.cleanup()
"""

from __future__ import annotations

from noughts.errors import GameNotFoundError, StoreError
from noughts.store.base import Finished, Store, StoreUnavailable
from noughts.store.scoring import (
    DIFFICULTY_POINTS,
    MAX_NAME_CHARS,
    STANDARD_BOARD,
    BoardScores,
    Change,
    Participant,
    Recorded,
    Scores,
    StoredGame,
    Tally,
    board_label,
    ranked,
    replay_scores,
    score_game,
)
from noughts.store.sqlite import ENV_VAR, SCHEMA_VERSION, default_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    import os
    from collections.abc import Mapping

__all__ = [
    "DIFFICULTY_POINTS", "ENV_VAR", "MAX_NAME_CHARS", "SCHEMA_VERSION", "STANDARD_BOARD", "BoardScores", "Change",
    "Finished", "GameNotFoundError", "Participant", "Recorded", "Scores", "Store", "StoreError", "StoreUnavailable",
    "StoredGame", "Tally",
    "board_label", "default_path", "is_url", "open_store", "ranked", "replay_scores", "score_game",
]


def is_url(where: object) -> bool:
    """Whether ``where`` names a PostgreSQL database rather than a file.

    >>> is_url("postgresql://ann@db.example/noughts"), is_url("postgres:///noughts"), is_url("scores.db")
    (True, True, False)
    """
    return isinstance(where, str) and where.startswith(("postgresql://", "postgres://"))


def open_store(where: str | os.PathLike[str] | None = None, *, environ: Mapping[str, str] | None = None,
               read_only: bool = False) -> Store:
    """Open the store ``where`` says (a file path or a ``postgresql://`` URL; ``None``: ``$NOUGHTS_DB``, else
    the default file); never raises for a problem with the file, folder or server: the store is
    then disabled and its ``reason`` says why in one sentence."""
    if where is None:
        import os

        where = (os.environ if environ is None else environ).get(ENV_VAR) or None
    if is_url(where):
        from noughts.store import postgresql

        return postgresql.open_store(str(where), read_only=read_only)
    from noughts.store import sqlite

    return sqlite.open_store(where, environ=environ, read_only=read_only)
