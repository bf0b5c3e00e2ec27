"""The ``sim`` backend: a pen robot that draws straight onto the paper model.

>>> from noughts.sheet.strokes import grid_strokes, plan_strokes
>>> robot = SimRobot(Machine.plotter())
>>> robot.home(); robot.draw(plan_strokes(grid_strokes(robot.paper.sheet), robot.machine)); robot.park()
>>> len(robot.paper.ink), robot.pen_down, robot.position == robot.park_point
(4, False, True)
"""

from __future__ import annotations

from collections.abc import Callable

from noughts.sheet.geometry import Machine, Point, Sheet, distance
from noughts.sheet.paper import Paper
from noughts.sheet.strokes import PenPlan

__all__ = ["SimRobot"]


class SimRobot:
    """Draws on ``paper`` (a fresh 3×3 sheet if none), keeping the pen's position and the time it
    would have taken on ``machine``. ``on_change`` is called after each step (a terminal or an SVG
    file can show the paper as it grows)."""

    def __init__(self, machine: Machine, paper: Paper | None = None,
                 on_change: Callable[[SimRobot], None] | None = None) -> None:
        self.machine = machine
        self.paper = paper or Paper(Sheet(3, 3))
        self.on_change = on_change
        self.position: Point = (0.0, 0.0)
        self.pen_down = False
        self.seconds = 0.0
        self.pen_up_mm = 0.0
        self.stopped = False

    @property
    def connected(self) -> bool:
        return True

    @property
    def park_point(self) -> Point:
        """Beyond the sheet's right edge, level with its top (in sheet millimetres)."""
        return self.paper.sheet.width, 0.0

    def _travel(self, to: Point) -> None:
        self.machine.to_machine(to)  # refuses a point outside the travel
        gap = distance(self.position, to)
        self.pen_up_mm += gap
        self.seconds += gap / self.machine.travel_speed
        self.position = to

    def home(self) -> None:
        self.pen_down = False
        self.position = (-self.machine.sheet_origin[0], -self.machine.sheet_origin[1] if self.machine.y_down
                         else self.machine.sheet_origin[1])
        self.stopped = False

    def draw(self, plan: PenPlan) -> None:
        for stroke in plan.strokes:  # check everything before the pen moves, as real plotters must
            for point in stroke.points:
                self.machine.to_machine(point)
        for stroke in plan.strokes:
            self._travel(stroke.start)
            self.pen_down = True
            self.paper.draw(stroke.points, by="robot", kind=stroke.kind)
            self.seconds += stroke.length / self.machine.draw_speed + 2 * self.machine.pen_dwell
            self.position = stroke.end
            self.pen_down = False
        if self.on_change is not None:
            self.on_change(self)

    def park(self) -> None:
        self.pen_down = False
        self._travel(self.park_point)

    def stop(self) -> None:
        self.pen_down = False
        self.stopped = True

    def close(self) -> None:
        self.pen_down = False
