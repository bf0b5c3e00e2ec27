"""Scores and the history of finished games.

``scoring`` holds the rules (the EV3 robot's points, runs and high scores, kept per board, and
the win/loss/draw tallies) and the values the store hands out, with no SQL, so every backend
scores alike; ``sqlite`` keeps them in a SQLite file with migrations, one transaction per
game, WAL with ``synchronous=FULL``, ``BEGIN IMMEDIATE`` with retries, and damaged files moved
aside, never overwritten. Everything is importable from here.

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

from noughts.errors import GameNotFoundError, StoreError
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
from noughts.store.sqlite import ENV_VAR, SCHEMA_VERSION, Store, default_path, open_store

__all__ = [
    "DIFFICULTY_POINTS", "ENV_VAR", "MAX_NAME_CHARS", "SCHEMA_VERSION", "STANDARD_BOARD", "BoardScores", "Change",
    "GameNotFoundError", "Participant", "Recorded", "Scores", "Store", "StoreError", "StoredGame", "Tally",
    "board_label", "default_path", "open_store", "ranked", "replay_scores", "score_game",
]
