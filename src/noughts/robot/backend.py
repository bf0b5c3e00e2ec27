"""The small interfaces between the robot's game and its hardware, like the panel's ``BoardIO``.

A :class:`PenRobot` moves a pen over the sheet: ``home`` (pen up first), ``draw`` a
:class:`~noughts.sheet.strokes.PenPlan`, ``park`` off the sheet so the human and the camera can see
it, ``stop`` at once (pen up, motion halted; safe to call from a signal handler or another thread).
A robot with a reflected-light sensor is also a :class:`LightProbe`. A :class:`Sensor` reads the
sheet and says, cell by cell, what it believes is there and how sure it is.

Every backend lands its pen-down moves on a :class:`~noughts.sheet.paper.Paper` in the tests
(directly for ``sim``, through a simulator of the device's protocol for the others).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from noughts.board import Board
from noughts.sheet.geometry import Machine, Point, RobotError
from noughts.sheet.reading import CellReading, SheetReading
from noughts.sheet.strokes import PenPlan

__all__ = ["CellReading", "LightProbe", "PenRobot", "RobotDisconnected", "SheetReading", "Sensor"]

# what a sensor says, shared with paper mode (noughts.paper_game): see noughts.sheet.reading


class RobotDisconnected(RobotError):
    """The robot stopped answering or its connection went away; the game is kept for a reconnect."""


@runtime_checkable
class PenRobot(Protocol):
    """What the robot's game needs from a pen robot."""

    machine: Machine

    @property
    def connected(self) -> bool: ...

    def home(self) -> None:
        """Lift the pen, then go to the machine's home (and find it, on machines that home)."""

    def draw(self, plan: PenPlan) -> None:
        """Draw ``plan``'s strokes in order (sheet millimetres), travelling with the pen up between
        them and lifting it at the end. Every point is checked against the travel before anything moves."""

    def park(self) -> None:
        """Move the pen (pen up) off the sheet, out of the human's way and the camera's view."""

    def stop(self) -> None:
        """Lift the pen and halt now (Ctrl-C, a lost connection)."""

    def close(self) -> None: ...


@runtime_checkable
class LightProbe(Protocol):
    """A robot carrying a reflected-light sensor (the seed's EV3 colour sensor)."""

    def reflected(self, points: Sequence[Point]) -> list[float]:
        """Move the sensor over each sheet point in turn and read the reflected light there, in
        percent (white paper reads high, ink low)."""


class Sensor(Protocol):
    """Reads the human's marks."""

    def read(self, board: Board) -> SheetReading:
        """Look at the sheet. ``board`` is what the robot knows is there already (its own marks and
        the human's earlier ones), so a sensor may skip cells it knows."""
