"""noughts in the tools people train agents with (the optional extra ``rl``).

* :mod:`noughts.envs.mnk_v0`: a PettingZoo AEC environment, ``mnk_v0.env(rows, cols, k)``, also
  registered with PettingZoo as ``noughts/mnk-v0`` when this package is imported
  (``pettingzoo.make("aec", "noughts/mnk-v0", rows=3, cols=3, k=3)``);
* :mod:`noughts.envs.gymnasium_env`: one side against any noughts player, registered with
  Gymnasium as ``noughts/Mnk-v0`` when this package is imported;
* :mod:`noughts.envs.openspiel`: the OpenSpiel game ``python_noughts_mnk`` and a bot wrapping
  any noughts player (importing it registers the game);
* :mod:`noughts.envs.vector`: thousands of boards stepped at once with numpy;
* :mod:`noughts.envs.symmetry`: observations, masks, policies and actions mapped through the
  board's symmetries.

Only Gymnasium and PettingZoo are imported here (to register the environments, not to make
them); OpenSpiel only by :mod:`noughts.envs.openspiel`; ``import noughts`` imports none of
them. See ``docs/envs.md``.
"""

from __future__ import annotations

import gymnasium
import pettingzoo

__all__ = ["GYMNASIUM_ID", "PETTINGZOO_ID"]

GYMNASIUM_ID = "noughts/Mnk-v0"
"""The Gymnasium id: ``gymnasium.make("noughts/Mnk-v0", rows=3, cols=3, k=3, opponent="perfect")``."""
PETTINGZOO_ID = "noughts/mnk-v0"
"""The PettingZoo id (its registry's spelling): ``pettingzoo.make("aec", "noughts/mnk-v0", rows=3, cols=3, k=3)``."""

if GYMNASIUM_ID not in gymnasium.registry:
    gymnasium.register(id=GYMNASIUM_ID, entry_point="noughts.envs.gymnasium_env:MnkEnv")
if PETTINGZOO_ID not in pettingzoo.aec_registry:
    pettingzoo.register("aec", PETTINGZOO_ID, entry_point="noughts.envs.mnk_v0:env")
