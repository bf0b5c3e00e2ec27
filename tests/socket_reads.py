"""Reading a Starlette TestClient websocket with a time limit.

``WebSocketTestSession.receive_json`` waits for ever: a message the server never sends hangs the
whole test run (stop 21's hang). ``receive_json`` here fails the test instead, naming what it waited for.
"""

from __future__ import annotations

import json
from typing import Any

import anyio

WAIT = 30.0  # seconds: far above any answer's time on a loaded machine, far below the run's own timeout


def receive_json(ws: Any, waiting_for: str, seconds: float = WAIT) -> Any:
    """The next message of ``ws`` (decoded JSON), or a failed test after ``seconds``."""
    async def receive() -> Any:
        with anyio.move_on_after(seconds):
            return await ws._send_rx.receive()  # what receive() awaits, within a deadline
        return None

    message = ws.portal.call(receive)
    if message is None:
        raise AssertionError(f"no message within {seconds:g} s while waiting for {waiting_for}")
    ws._raise_on_close(message)
    return json.loads(message["text"])
