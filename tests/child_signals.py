"""For tests that press Ctrl-C on a child process."""

from __future__ import annotations

import signal


def default_sigint() -> None:
    """In the child (``preexec_fn``): Ctrl-C as on a terminal, even when pytest itself runs with SIGINT
    ignored (started with ``&`` or nohup), which the child would otherwise inherit."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
