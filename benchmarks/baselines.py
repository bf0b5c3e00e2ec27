"""Baselines the benchmark compares noughts against.

* Textbook 3×3 solvers: plain recursive minimax and alpha-beta on a list board, no memo, no symmetry.
* OpenSpiel (optional): its Python ``alpha_beta_search``, its ``MinimaxSolver`` and random games
  through ``pyspiel``.  ``openspiel()`` returns ``None`` and ``OPENSPIEL_ERROR`` says why when it
  cannot be imported.
"""

from __future__ import annotations

import random
from typing import Any

LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))
EMPTY = "."


def _winner(board: list[str]) -> str | None:
    for a, b, c in LINES:
        if board[a] != EMPTY and board[a] == board[b] == board[c]:
            return board[a]
    return None


def textbook_minimax(board: list[str], player: str) -> int:
    """Value for X (1 win, 0 draw, -1 loss) with ``player`` to move; searches the whole tree."""
    winner = _winner(board)
    if winner is not None:
        return 1 if winner == "X" else -1
    if EMPTY not in board:
        return 0
    other = "O" if player == "X" else "X"
    values = []
    for cell in range(9):
        if board[cell] == EMPTY:
            board[cell] = player
            values.append(textbook_minimax(board, other))
            board[cell] = EMPTY
    return max(values) if player == "X" else min(values)


def textbook_alphabeta(board: list[str], player: str, alpha: int = -2, beta: int = 2) -> int:
    """Same value as ``textbook_minimax``, with alpha-beta pruning."""
    winner = _winner(board)
    if winner is not None:
        return 1 if winner == "X" else -1
    if EMPTY not in board:
        return 0
    other = "O" if player == "X" else "X"
    best = -2 if player == "X" else 2
    for cell in range(9):
        if board[cell] == EMPTY:
            board[cell] = player
            value = textbook_alphabeta(board, other, alpha, beta)
            board[cell] = EMPTY
            if player == "X":
                best = max(best, value)
                alpha = max(alpha, best)
            else:
                best = min(best, value)
                beta = min(beta, best)
            if alpha >= beta:
                break
    return best


def empty_board() -> list[str]:
    return [EMPTY] * 9


# --- OpenSpiel ---------------------------------------------------------------------------------

OPENSPIEL_ERROR = ""


def openspiel() -> Any:
    """The ``pyspiel`` module, or None (then ``OPENSPIEL_ERROR`` says why)."""
    global OPENSPIEL_ERROR
    try:
        import pyspiel
        from open_spiel.python.algorithms import minimax, minimax_solver  # noqa: F401
    except Exception as exc:  # ImportError, or a broken binary wheel
        OPENSPIEL_ERROR = f"OpenSpiel unavailable ({type(exc).__name__}: {exc}); pip install open-spiel"
        return None
    return pyspiel


def openspiel_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("open-spiel")
    except PackageNotFoundError:
        return ""


def os_state(game: Any, moves: tuple[int, ...]) -> Any:
    """OpenSpiel tic_tac_toe state after ``moves`` (its actions are noughts' cell numbers: row*3 + col)."""
    state = game.new_initial_state()
    for move in moves:
        state.apply_action(move)
    return state


def os_alpha_beta(game: Any, state: Any) -> tuple[float, int]:
    """(value for the side to move, best action) from OpenSpiel's Python alpha-beta."""
    from open_spiel.python.algorithms.minimax import alpha_beta_search

    return alpha_beta_search(game, state=state)


def os_minimax_solver(game_string: str) -> int:
    """Solve every reachable position with OpenSpiel's MinimaxSolver; return how many it stored."""
    from open_spiel.python.algorithms.minimax_solver import MinimaxSolver

    return len(MinimaxSolver(game_string).solve())


def os_random_game(game: Any, rng: random.Random) -> None:
    state = game.new_initial_state()
    while not state.is_terminal():
        state.apply_action(rng.choice(state.legal_actions()))
