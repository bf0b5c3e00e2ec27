"""Simulated serial devices where pyserial can reach them: on a pseudo-terminal (a device path, as
a USB adapter) or on a TCP port of 127.0.0.1 (a ``socket://`` URL, as a serial-to-network bridge
such as ser2net). A thread feeds what the host sends to the device and writes back its answer.

A device is anything with ``feed(bytes) -> bytes`` (its answer), ``take_output() -> bytes`` and
a ``dropped`` flag it raises to have the link hung up (the "drop" fault), such as
:class:`~noughts.robot.sim.grbl.GrblSimulator`.
"""

from __future__ import annotations

import os
import select
import socket
import threading
import tty
from collections.abc import Callable
from typing import Protocol

__all__ = ["SerialDevice", "SimulatorLink", "serve_pty", "serve_socket"]


class SerialDevice(Protocol):
    dropped: bool

    def feed(self, data: bytes) -> bytes: ...

    def take_output(self) -> bytes: ...


class SimulatorLink:
    """A device served by a thread at ``address`` (a device path or a pyserial URL). ``lock`` guards
    the device while the thread feeds it; :meth:`stop` ends the thread and closes the link."""

    def __init__(self, device: SerialDevice, address: str) -> None:
        self.device = device
        self.address = address
        self.lock = threading.Lock()
        device.take_output()  # the device has been on a while: what it said at power-up is long gone
        self._wake_read, self._wake_write = socket.socketpair()
        self._thread: threading.Thread | None = None

    def _start(self, serve: Callable[[], None]) -> SimulatorLink:
        self._thread = threading.Thread(target=serve, name=f"simulated device on {self.address}", daemon=True)
        self._thread.start()
        return self

    def _talk(self, data: bytes) -> tuple[bytes, bool]:
        with self.lock:
            return self.device.feed(data), self.device.dropped

    def _wait(self, source: int | socket.socket) -> bool:
        """Wait until ``source`` has something to read; False when the link is being stopped."""
        ready, _, _ = select.select([source, self._wake_read], [], [])
        return self._wake_read not in ready

    def stop(self) -> None:
        self._wake_write.send(b"x")
        if self._thread is not None:
            self._thread.join()
        self._wake_read.close()
        self._wake_write.close()

    def __enter__(self) -> SimulatorLink:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def serve_pty(device: SerialDevice) -> SimulatorLink:
    """``device`` on a new pseudo-terminal: open ``link.address`` as a serial port. A drop hangs the
    terminal up for good, as an unplugged USB adapter does."""
    master, slave = os.openpty()
    tty.setraw(slave)  # no echo or line editing: bytes pass as they are
    link = SimulatorLink(device, os.ttyname(slave))

    def serve() -> None:
        try:  # the slave stays open here too, so the pty keeps its buffer while the host reopens it
            reply, dropped = link._talk(b"")
            while not dropped:
                while reply:
                    reply = reply[os.write(master, reply):]
                if not link._wait(master):
                    return
                reply, dropped = link._talk(os.read(master, 4096))
        except OSError:
            pass
        finally:
            os.close(master)
            os.close(slave)

    return link._start(serve)


def serve_socket(device: SerialDevice) -> SimulatorLink:
    """``device`` on a TCP port of 127.0.0.1: open ``link.address`` (``socket://127.0.0.1:PORT``). It
    takes one client at a time, and another after a drop or a client that leaves."""
    server = socket.create_server(("127.0.0.1", 0))
    link = SimulatorLink(device, f"socket://127.0.0.1:{server.getsockname()[1]}")

    def serve_client(client: socket.socket) -> bool:
        client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with link.lock:
            device.dropped = False
        reply, dropped = link._talk(b"")
        while not dropped:
            client.sendall(reply)
            if not link._wait(client):
                return False
            data = client.recv(4096)
            if not data:
                break
            if hasattr(socket, "TCP_QUICKACK"):  # acknowledge at once: pyserial leaves Nagle on for its small writes
                client.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 1)
            reply, dropped = link._talk(data)
        return True

    def serve() -> None:
        with server:
            while link._wait(server):
                client, _ = server.accept()
                with client:
                    try:
                        if not serve_client(client):
                            return
                    except OSError:
                        pass  # the client went away; wait for the next one

    return link._start(serve)
