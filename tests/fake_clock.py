"""A clock that moves only when the test says: what shows after a while, without waiting."""

from __future__ import annotations

import math


class Clock:
    """Called like ``time.monotonic``; ``advance`` moves it."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        """At least ``seconds``, in whole 1/1024 s, so that the sums and differences are exact."""
        self.now += math.ceil(seconds * 1024) / 1024
