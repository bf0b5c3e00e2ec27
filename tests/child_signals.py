"""For tests that press Ctrl-C on a child process."""

from __future__ import annotations

import signal
import subprocess


def default_sigint() -> None:
    """In the child (``preexec_fn``): Ctrl-C as on a terminal, even when pytest itself runs with SIGINT
    ignored (started with ``&`` or nohup), which the child would otherwise inherit."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def stop(process: subprocess.Popen[bytes] | subprocess.Popen[str], wait: float = 15) -> None:
    """Stop a server the test started as a person would (SIGTERM: it saves its games on the way out);
    kill it if it has not gone within ``wait`` seconds."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(wait)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
