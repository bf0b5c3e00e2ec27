"""Every reachable 3×3 position, shared by the tests that check something over all of them."""

from __future__ import annotations

from functools import cache

from noughts.board import Board


@cache
def every_3x3_position() -> dict[int, Board]:
    """Every reachable 3×3 position by key, found with play() (5,478 of them)."""
    found = {Board().key: Board()}
    frontier = [Board()]
    while frontier:
        following = []
        for board in frontier:
            for cell in board.legal_moves:
                child = board.play(cell)
                if child.key not in found:
                    found[child.key] = child
                    following.append(child)
        frontier = following
    return found
