"""Exhaustive strength checks of the 3×3 players.

* ``minimax``, ``hard`` and ``newell-simon`` never lose, as X or O, whatever the opponent
  plays; where the player breaks ties at random every tie-break is explored.
* ``simple-rules``, ``parsons`` and ``mdttt`` can be beaten: each has a forced line, kept
  here as data and checked against every tie-break the player could take.
* ``minimax`` plays exactly the EV3 robot's ``bestRobotMove`` in every position.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from functools import cache

import pytest

from noughts import Board
from noughts.players import get
from noughts.players.base import Player
from noughts.players.minimax import MinimaxPlayer


def moves_of(player: Player, board: Board) -> tuple[int, ...]:
    """Every cell the player might choose here (its candidates if it breaks ties at random)."""
    candidates = getattr(player, "candidates", None)
    return tuple(candidates(board)) if candidates is not None else (player.choose(board),)


def games_lost(player: Player, side: str) -> list[list[int]]:
    """Every game (as cell lists) the player loses playing ``side``, over all opponent moves."""
    lost: list[list[int]] = []
    explored: set[int] = set()

    def explore(board: Board, moves: list[int]) -> None:
        if board.key in explored:  # transpositions: the same position has the same future
            return
        explored.add(board.key)
        if board.is_over:
            if board.winner not in (None, side):
                lost.append(moves)
            return
        cells = moves_of(player, board) if board.turn == side else board.legal_moves
        assert cells, f"{player.name} has no move in {board}"
        for cell in cells:
            explore(board.play(cell), [*moves, cell])

    explore(Board(), [])
    assert len(explored) > 100  # the walk really covered the game
    return lost


@pytest.mark.parametrize("side", ["X", "O"])
@pytest.mark.parametrize("name", ["minimax", "hard", "newell-simon"])
def test_never_loses(name: str, side: str) -> None:
    assert games_lost(get(name, random.Random(0)), side) == []


@pytest.mark.parametrize("name", ["simple-rules", "parsons", "mdttt", "arduino", "random"])
def test_the_loss_check_can_fail(name: str) -> None:
    # The same walk finds losses for the weaker players (when they play O).
    assert games_lost(get(name, random.Random(0)), "O")


# Forced wins against the weaker players -------------------------------------------------------
# Each maps a position (X to move) to X's move. The computer plays O; X wins against every
# move O could choose. All three fall for the same idea: X takes a corner, O the centre, X the
# opposite corner; O answers in a corner (a "fork block" none of them knows), X must block
# O's diagonal and that block is a fork.

# parsons is deterministic: X a1, O b2, X c3, O c1 (first free corner), X a3 (forced block,
# and a fork: a2 and b3), O b3 (blocks row 3, the first line scanned), X a2 wins.
PARSONS_FORCED = {
    ".../.../...": 0,
    "X../.O./...": 8,
    "X.O/.O./..X": 6,
    "X.O/.O./XOX": 3,
}

# simple-rules picks at random among the free corners (c1 or a3) and between the two blocks.
SEED001_RULES_FORCED = {
    ".../.../...": 0,
    "X../.O./...": 8,
    "X.O/.O./..X": 6,  # O took c1: block a3, forking a2 / b3
    "X.O/OO./X.X": 7,
    "X.O/.O./XOX": 3,
    "X../.O./O.X": 2,  # O took a3: block c1, forking b1 / c2
    "XOX/.O./O.X": 5,
    "X.X/.OO/O.X": 1,
}

# mdttt plays the centre (mode 3), then c1 or a3 at random (mode 2: a 2 of its own and the
# fewest opp-1). Facing X's fork every cell leaves an X 2, so it falls to mode 4 and plays the
# cell with the most own-1 lines, blocking neither threat.
MDTTT_FORCED = {
    ".../.../...": 0,
    "X../.O./...": 8,
    "X.O/.O./..X": 6,  # O took c1
    "XOO/.O./X.X": 3,  # O then b1 or c2
    "X.O/.OO/X.X": 3,
    "X../.O./O.X": 2,  # O took a3
    "X.X/OO./O.X": 1,  # O then a2 or b3
    "X.X/.O./OOX": 1,
}


def assert_forced_win(player: Player, strategy: dict[str, int]) -> list[list[str]]:
    """X follows ``strategy`` against every choice of ``player`` (O) and always wins.

    Returns the games played, in cell names, for the record."""
    games: list[list[str]] = []
    used: set[str] = set()

    def follow(board: Board, moves: list[str]) -> None:
        if board.is_over:
            assert board.winner == "X", f"{player.name} escaped with {' '.join(moves)}"
            games.append(moves)
            return
        if board.turn == "X":
            position = str(board)
            assert position in strategy, f"the strategy has no move for {position} ({' '.join(moves)})"
            used.add(position)
            cells: tuple[int, ...] = (strategy[position],)
        else:
            cells = moves_of(player, board)
        for cell in cells:
            follow(board.play(cell), [*moves, board.cell_name(cell)])

    follow(Board(), [])
    assert used == set(strategy), "every entry of the strategy is needed"
    return games


@pytest.mark.parametrize(("name", "strategy"), [
    ("parsons", PARSONS_FORCED),
    ("simple-rules", SEED001_RULES_FORCED),
    ("mdttt", MDTTT_FORCED),
])
def test_forced_win_against(name: str, strategy: dict[str, int]) -> None:
    games = assert_forced_win(get(name, random.Random(0)), strategy)
    print(f"\n{name} loses, whatever it picks, in:", *(" ".join(game) for game in games), sep="\n  ")
    assert all(len(game) == 7 for game in games)  # X wins on its fourth move


def test_forced_win_check_can_fail() -> None:
    # Against a player that does defend forks the same strategy meets an unknown position.
    with pytest.raises(AssertionError, match="no move for"):
        assert_forced_win(get("newell-simon", random.Random(0)), SEED001_RULES_FORCED)


# minimax against a plain re-implementation of the robot's bestRobotMove ------------------------

ROBOT, PERSON = 1, 2
LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))


def has_won(cells: tuple[int, ...], who: int) -> bool:
    return any(all(cells[i] == who for i in line) for line in LINES)


@cache
def plain_minimax(cells: tuple[int, ...], depth: int, maximising: bool) -> int:
    """The robot's minimax without pruning (pruning does not change the value)."""
    if has_won(cells, ROBOT):
        return 100 - depth
    if has_won(cells, PERSON):
        return -100 + depth
    if 0 not in cells:
        return 0
    mark = ROBOT if maximising else PERSON
    scores = [plain_minimax((*cells[:i], mark, *cells[i + 1:]), depth + 1, not maximising)
              for i in range(9) if cells[i] == 0]
    return max(scores) if maximising else min(scores)


def plain_best_robot_move(cells: tuple[int, ...]) -> int:
    best_move, best_score = -1, -100_000
    for i in range(9):
        if cells[i] == 0:
            score = plain_minimax((*cells[:i], ROBOT, *cells[i + 1:]), 0, False)
            if score > best_score:  # strictly better only: the lowest cell keeps a tie
                best_move, best_score = i, score
    return best_move


def unfinished_positions() -> Iterator[Board]:
    """Every reachable 3×3 position where someone is still to move, each once."""
    seen: set[int] = set()
    stack = [Board()]
    while stack:
        board = stack.pop()
        if board.key in seen or board.is_over:
            continue
        seen.add(board.key)
        yield board
        stack.extend(board.play(cell) for cell in board.legal_moves)


def test_minimax_is_best_robot_move_in_every_position() -> None:
    player = MinimaxPlayer()
    compared = 0
    for board in unfinished_positions():
        robot = board.turn
        cells = tuple(0 if mark is None else ROBOT if mark == robot else PERSON for mark in board.cells)
        assert player.choose(board) == plain_best_robot_move(cells), str(board)
        compared += 1
    assert compared == 4520  # every non-terminal position of 3×3 noughts and crosses


# mdttt against a transcription of the library's doAutoMove --------------------------------------

# MD_TTT's win weight matrix: for each cell a..i, its lines in the order D1 H1 H2 H3 V1 V2 V3 D2,
# first line in the top bit.
WIN_WEIGHTS = (0b11001000, 0b01000100, 0b01000011, 0b00101000, 0b10100101,
               0b00100010, 0b00011001, 0b00010100, 0b10010010)


def library_choices(cells: tuple[int, ...], player: int) -> set[int]:
    """Every cell doAutoMove can return for ``player`` (+1 or -1), following each coin both ways."""
    state = [0] * 8
    for pos, who in enumerate(cells):
        for i in range(8):
            state[i] += who * (WIN_WEIGHTS[pos] >> (7 - i) & 1)
    scores: dict[int, list[int]] = {}
    for k in range(9):
        if cells[k] == 0:
            tally = [0] * 7  # sums -3..3
            for i in range(8):
                tally[state[i] + player * (WIN_WEIGHTS[k] >> (7 - i) & 1) + 3] += 1
            scores[k] = tally[::-1] if player < 0 else tally  # the library's SWAP(0,6) (1,5) (2,4)
    for mode in range(5):  # the library's default case (mode 4) repeats for ever after
        keepers: set[int | None] = {None}
        for i, s in scores.items():
            following: set[int | None] = set()
            for best in keepers:
                b = scores[best] if best is not None else None
                if mode == 0:
                    following.add(i if s[6] else best)
                    continue
                column = 5 if mode in (1, 2) else 4
                allowed = (s[column] != 0 and (mode == 4 or s[1] == 0) and (mode != 1 or s[2] == 0))
                if not allowed:
                    following.add(best)
                elif b is None or s[column] > b[column]:
                    following.add(i)
                elif s[column] < b[column]:
                    following.add(best)
                elif mode != 1 and s[2] < b[2]:  # fewer opponent 1s
                    following.add(i)
                elif mode != 1 and s[2] > b[2]:
                    following.add(best)
                else:
                    following.update((i, best))  # randomChoice(): either
            keepers = following
        if None not in keepers:
            return {cell for cell in keepers if cell is not None}
    return set(scores)  # the library would hang; our player picks any empty cell


def test_mdttt_matches_the_library_in_every_position() -> None:
    player = get("mdttt", random.Random(0))
    compared = 0
    for board in unfinished_positions():
        cells = tuple(0 if mark is None else 1 if mark == "X" else -1 for mark in board.cells)
        sign = 1 if board.turn == "X" else -1
        assert set(moves_of(player, board)) == library_choices(cells, sign), str(board)
        compared += 1
    assert compared == 4520
