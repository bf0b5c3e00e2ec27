"""Pen robots: ``sim`` (straight onto the paper model), ``grbl`` (G-code over serial), ``ebb``
(AxiDraw and other EiBotBoard plotters through plotink) and ``ev3`` (seed 003's LEGO robot)."""
