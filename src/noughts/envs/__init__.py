"""noughts in the tools people train agents with (the optional extra ``rl``).

* :mod:`noughts.envs.mnk_v0`: a PettingZoo AEC environment, ``mnk_v0.env(rows, cols, k)``;
* :mod:`noughts.envs.gymnasium_env`: one side against any noughts player, registered with
  Gymnasium as ``noughts/Mnk-v0`` when this package is imported;
* :mod:`noughts.envs.openspiel`: the OpenSpiel game ``python_noughts_mnk`` and a bot wrapping
  any noughts player (importing it registers the game);
* :mod:`noughts.envs.vector`: thousands of boards stepped at once with numpy;
* :mod:`noughts.envs.symmetry`: observations, masks, policies and actions mapped through the
  board's symmetries.

Only Gymnasium is imported here; each framework is imported by its own module, and
``import noughts`` imports none of them. See ``docs/envs.md``.
"""

from __future__ import annotations

import gymnasium

__all__ = ["GYMNASIUM_ID"]

GYMNASIUM_ID = "noughts/Mnk-v0"
"""The Gymnasium id: ``gymnasium.make("noughts/Mnk-v0", rows=3, cols=3, k=3, opponent="perfect")``."""

if GYMNASIUM_ID not in gymnasium.registry:
    gymnasium.register(id=GYMNASIUM_ID, entry_point="noughts.envs.gymnasium_env:MnkEnv")
