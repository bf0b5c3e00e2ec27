"""The paper sheet, below the front ends that use it: the robot (which draws on it) and paper mode
(where a person draws both sides, :mod:`noughts.paper_game`).

``geometry`` (the sheet's layout: markers, grid, cells, in millimetres; a machine's travel),
``strokes`` (the pen strokes of the markers, the grid and the marks), ``paper`` (the ink on a sheet,
drawn as SVG), ``reading`` (what a look at the sheet found) and ``camera`` (reading a photo of the
sheet with OpenCV, an optional dependency imported only when a picture is read).
"""
