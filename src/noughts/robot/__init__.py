"""The drawing robot: a pen robot draws the grid and its own X and O on paper, reads the human's
marks (camera, light sensor or keyboard), and plays a :class:`~noughts.match.Match` like every
other front end (seed 003's EV3 robot, and the plotters people own).

* :mod:`~noughts.sheet.geometry`: the sheet's layout in millimetres and the machine's reach;
* :mod:`~noughts.sheet.strokes`: the strokes of the grid, markers and marks, and their order;
* :mod:`~noughts.sheet.paper`: the paper model every backend and sensor shares, and its SVG.

The hardware and vision libraries (pyserial, plotink, OpenCV) are optional (``noughts[robot]``)
and imported only by the backend or sensor that needs them.
"""

from __future__ import annotations

from noughts.sheet.geometry import Machine, RobotError, Sheet
from noughts.sheet.paper import Paper, sheet_svg
from noughts.sheet.strokes import PenPlan, Stroke, grid_strokes, mark_strokes, marker_strokes, plan_strokes

__all__ = ["Machine", "Paper", "PenPlan", "RobotError", "Sheet", "Stroke", "grid_strokes", "mark_strokes",
           "marker_strokes", "plan_strokes", "sheet_svg"]
