"""One budget for everything that searches: positions (nodes), seconds, or both.

A :class:`Budget` starts its clock when it is made. Searches spend it: they call
:meth:`Budget.check` with the positions searched since their last call, often enough that
it runs out within a few milliseconds of its limit, and :meth:`~Budget.check` raises
:class:`~noughts.errors.BudgetExceeded` once either limit is reached. ``None`` is no limit.

>>> budget = Budget(nodes=1_000, seconds=30)
>>> budget.check(400)
>>> budget.spent, budget.nodes_left()
(400, 600)
>>> budget.check(600)
Traceback (most recent call last):
  ...
noughts.errors.BudgetExceeded: the search gave up after 1,000 positions, its budget

The clock can be any function returning seconds, so tests can move time by hand:

>>> now = [0.0]
>>> budget = Budget(seconds=2, clock=lambda: now[0])
>>> now[0] = 2.5
>>> budget.exhausted
True

Players search once per move: they keep a budget as a template and play each move on
:meth:`~Budget.renewed`, a copy with the same limits and a fresh start.
"""

from __future__ import annotations

import math
import time

from noughts.errors import BudgetExceeded, InvalidBudgetError

TYPE_CHECKING = False  # typing costs milliseconds at import; mypy still reads the block
if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["Budget"]


class Budget:
    """At most ``nodes`` positions and ``seconds`` of ``clock`` time, counted from creation."""

    __slots__ = ("nodes", "seconds", "clock", "spent", "started")

    nodes: int | None
    seconds: float | None
    clock: Callable[[], float]
    spent: int
    started: float

    def __init__(self, nodes: int | None = None, seconds: float | None = None, *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.nodes = _checked_nodes(nodes, "nodes")
        self.seconds = _checked_seconds(seconds, "seconds")
        self.clock = clock
        self.spent = 0
        self.started = clock()

    @classmethod
    def until(cls, deadline: float | None, nodes: int | None = None, *,
              clock: Callable[[], float] = time.monotonic) -> Budget:
        """A budget that runs out at ``deadline``, a time on ``clock`` (``None``: no time limit)."""
        if deadline is None:
            return cls(nodes, clock=clock)
        if isinstance(deadline, bool) or not isinstance(deadline, int | float) or math.isnan(deadline):
            raise InvalidBudgetError(f"a deadline is a time in seconds, not {deadline!r:.40}")
        budget = cls(nodes, clock=clock)
        budget.seconds = max(0.0, deadline - budget.started)
        return budget

    # reading -------------------------------------------------------------------------------
    def elapsed(self) -> float:
        """Seconds since the budget was made."""
        return self.clock() - self.started

    def nodes_left(self) -> int | None:
        """Positions that may still be searched (``None``: no limit)."""
        return None if self.nodes is None else max(0, self.nodes - self.spent)

    def seconds_left(self) -> float | None:
        """Seconds that remain (``None``: no limit)."""
        return None if self.seconds is None else max(0.0, self.seconds - self.elapsed())

    @property
    def exhausted(self) -> bool:
        """Whether :meth:`check` would raise now."""
        return ((self.nodes is not None and self.spent >= self.nodes)
                or (self.seconds is not None and self.elapsed() >= self.seconds))

    # spending ------------------------------------------------------------------------------
    def check(self, nodes: int = 0) -> None:
        """Count ``nodes`` more positions searched; raise :class:`BudgetExceeded` once spent."""
        self.spent += nodes
        if self.nodes is not None and self.spent >= self.nodes:
            raise BudgetExceeded(f"the search gave up after {self.spent:,} positions, its budget",
                                 reason="nodes", spent=self.spent, elapsed=self.elapsed())
        if self.seconds is not None:
            elapsed = self.clock() - self.started
            if elapsed >= self.seconds:
                raise BudgetExceeded(
                    f"the search ran out of time after {self.spent:,} positions in {elapsed:.1f} s",
                    reason="time", spent=self.spent, elapsed=elapsed)

    # new budgets ---------------------------------------------------------------------------
    def renewed(self) -> Budget:
        """The same limits and clock, starting now with nothing spent (one per move)."""
        return Budget(self.nodes, self.seconds, clock=self.clock)

    def limited(self, nodes: int | None = None, seconds: float | None = None) -> Budget:
        """A budget starting now, within what is left of this one and within ``nodes`` and ``seconds``.

        What the new budget spends is not taken from this one.
        """
        nodes = _checked_nodes(nodes, "nodes")
        seconds = _checked_seconds(seconds, "seconds")
        left_nodes, left_seconds = self.nodes_left(), self.seconds_left()
        if left_nodes is not None:
            nodes = left_nodes if nodes is None else min(nodes, left_nodes)
        if left_seconds is not None:
            seconds = left_seconds if seconds is None else min(seconds, left_seconds)
        return Budget(nodes, seconds, clock=self.clock)

    def __repr__(self) -> str:
        return f"Budget(nodes={self.nodes!r}, seconds={self.seconds!r}, spent={self.spent!r})"


def _checked_nodes(nodes: object, name: str) -> int | None:
    if nodes is None:
        return None
    if type(nodes) is not int or nodes < 0:
        raise InvalidBudgetError(f"{name} must be a whole number of positions, zero or more, not {nodes!r:.40}")
    return nodes


def _checked_seconds(seconds: object, name: str) -> float | None:
    if seconds is None:
        return None
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not seconds >= 0:
        raise InvalidBudgetError(f"{name} must be a number of seconds, zero or more, not {seconds!r:.40}")
    return float(seconds)
