"""The one budget type: positions and seconds, on a clock the tests move by hand."""

from __future__ import annotations

import pickle

import pytest

from noughts import Budget, BudgetExceeded, InvalidBudgetError, NoughtsError


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_positions_run_out_at_the_limit() -> None:
    budget = Budget(nodes=10)
    budget.check(9)
    assert not budget.exhausted and budget.nodes_left() == 1
    with pytest.raises(BudgetExceeded) as caught:
        budget.check(1)
    assert (caught.value.reason, caught.value.spent) == ("nodes", 10)
    assert budget.exhausted and budget.nodes_left() == 0


def test_seconds_run_out_on_its_clock() -> None:
    clock = Clock()
    budget = Budget(seconds=2.0, clock=clock)
    clock.now += 1.5
    budget.check(5)
    assert budget.elapsed() == 1.5 and budget.seconds_left() == 0.5
    clock.now += 0.5
    assert budget.exhausted
    with pytest.raises(BudgetExceeded, match=r"ran out of time after 5 positions in 2\.0 s") as caught:
        budget.check()
    assert caught.value.reason == "time" and caught.value.elapsed == 2.0


def test_no_limits_never_run_out() -> None:
    clock = Clock()
    budget = Budget(clock=clock)
    clock.now += 1e9
    budget.check(10**12)
    assert not budget.exhausted and budget.nodes_left() is None and budget.seconds_left() is None


def test_until_a_deadline() -> None:
    clock = Clock()
    budget = Budget.until(103.0, 50, clock=clock)
    assert (budget.nodes, budget.seconds) == (50, 3.0)
    assert Budget.until(90.0, clock=clock).seconds == 0.0  # already past: out at the first look
    assert Budget.until(None, 7).seconds is None


def test_renewed_starts_again_with_the_same_limits() -> None:
    clock = Clock()
    budget = Budget(nodes=10, seconds=5, clock=clock)
    budget.check(8)
    clock.now += 4
    fresh = budget.renewed()
    assert (fresh.nodes, fresh.seconds, fresh.spent, fresh.elapsed(), fresh.clock) == (10, 5.0, 0, 0.0, clock)
    assert budget.spent == 8  # the template is left alone


def test_limited_is_a_part_of_what_is_left() -> None:
    clock = Clock()
    budget = Budget(nodes=100, seconds=10, clock=clock)
    budget.check(30)
    clock.now += 4
    part = budget.limited(nodes=1_000, seconds=2)
    assert (part.nodes, part.seconds) == (70, 2.0)
    assert (budget.limited().nodes, budget.limited().seconds) == (70, 6.0)
    part.check(5)
    assert budget.spent == 30  # spent apart
    assert Budget().limited(nodes=3).nodes == 3


@pytest.mark.parametrize("limits", [
    {"nodes": -1}, {"nodes": 2.5}, {"nodes": "10"}, {"nodes": True}, {"seconds": -1}, {"seconds": float("nan")},
    {"seconds": "1"}, {"seconds": False},
])
def test_impossible_limits_are_refused_with_a_reason(limits: dict[str, object]) -> None:
    with pytest.raises(InvalidBudgetError) as caught:
        Budget(**limits)  # type: ignore[arg-type]
    assert isinstance(caught.value, NoughtsError) and str(next(iter(limits))) in str(caught.value)
    with pytest.raises(InvalidBudgetError):
        Budget.until("soon")  # type: ignore[arg-type]


def test_budget_exceeded_survives_pickling() -> None:
    error = BudgetExceeded("out", reason="time", spent=3, elapsed=1.5)
    back = pickle.loads(pickle.dumps(error))
    assert str(back) == "out" and isinstance(back, BudgetExceeded)
    assert (back.reason, back.spent, back.elapsed) == ("time", 3, 1.5)


def test_repr() -> None:
    assert repr(Budget(5, 2.5)) == "Budget(nodes=5, seconds=2.5, spent=0)"
