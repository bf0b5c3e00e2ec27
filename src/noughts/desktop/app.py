"""The window: pygame events in, the controller's view drawn out, one :meth:`App.step` at a time.

The computer's move and hints are worked out on a background thread (:class:`ThreadWorker`)
that posts a :data:`JOB_DONE` event with the answer, so the event loop never waits: the
window can be moved, resized or closed while the computer thinks.
"""

from __future__ import annotations

import os
import queue
import socket
import sys
import threading
import time
from collections.abc import Callable, Mapping

os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")  # no banner on the person's terminal

import pygame

from noughts.desktop.controller import Controller
from noughts.desktop.draw import draw, forget_fonts, target_at
from noughts.desktop.layout import MIN_SIZE, Target
from noughts.errors import NoughtsError
from noughts.store import Store

__all__ = ["App", "DEFAULT_WINDOW", "JOB_DONE", "ThreadWorker"]

DEFAULT_WINDOW = (640, 760)
_PROBE_SECONDS = 1.0  # how long to wait for a screen's socket to answer
_INVISIBLE = frozenset({"offscreen", "dummy"})  # SDL drivers that show nothing to anyone
JOB_DONE = pygame.event.custom_type()  # a worker's answer: token, result, error

_KEYS = {
    **{getattr(pygame, f"K_{n}"): str(n) for n in range(10)},
    **{getattr(pygame, f"K_KP{n}"): str(n) for n in range(10)},  # keypad digits: the same reading order
    **{getattr(pygame, f"K_{letter}"): letter for letter in "abcdefghijklmnopqrstuvwxyz"},  # cell names, shortcuts
    pygame.K_LEFT: "left", pygame.K_RIGHT: "right", pygame.K_UP: "up", pygame.K_DOWN: "down",
    pygame.K_RETURN: "enter", pygame.K_KP_ENTER: "enter", pygame.K_SPACE: "space",
    pygame.K_ESCAPE: "escape", pygame.K_BACKSPACE: "backspace", pygame.K_TAB: "tab",
}
_IDLE_WAIT_MS = 250  # the longest the loop sleeps waiting for an event


class ThreadWorker:
    """One background thread that runs jobs in order and posts each answer as a JOB_DONE event.

    Jobs run one at a time because the players and the solver share caches that are not made
    for two threads at once. The thread is a daemon: closing the window never waits for it.
    """

    def __init__(self) -> None:
        self._jobs: queue.Queue[tuple[int, Callable[[], object], float] | None] = queue.Queue()
        self._closed = threading.Event()
        self._lock = threading.Lock()  # posting and closing exclude each other: no post after pygame.quit
        self.thread = threading.Thread(target=self._run, name="noughts-worker", daemon=True)
        self.thread.start()

    def submit(self, token: int, job: Callable[[], object], delay: float = 0.0) -> None:
        self._jobs.put((token, job, time.monotonic() + delay))

    def close(self) -> None:
        with self._lock:
            self._closed.set()
        self._jobs.put(None)

    def _run(self) -> None:
        while True:
            item = self._jobs.get()
            if item is None or self._closed.is_set():
                return
            token, job, not_before = item
            result: object = None
            error: str | None = None
            try:
                result = job()
            except NoughtsError as problem:
                error = str(problem)
            except Exception as problem:  # a bug in a player: show it rather than lose the move silently
                error = f"{type(problem).__name__}: {problem}"
            # the "thinking" pause: waits on the close flag, so closing the window cuts it short
            if self._closed.wait(max(0.0, not_before - time.monotonic())):
                return
            with self._lock:
                if self._closed.is_set():
                    return
                try:
                    pygame.event.post(pygame.event.Event(JOB_DONE, token=token, result=result, error=error))
                except pygame.error:  # the display went away: nobody is waiting any more
                    return


def _require_a_screen(env: Mapping[str, str]) -> None:
    """Refuse at once when no screen answers: SDL would otherwise fall back to an invisible
    offscreen window, and the person would wait for a game nobody can see."""
    if not sys.platform.startswith("linux"):
        return
    display, wayland = env.get("DISPLAY", ""), env.get("WAYLAND_DISPLAY", "")
    if not display and not wayland:
        raise NoughtsError("there is no screen to open a window on (no DISPLAY or WAYLAND_DISPLAY); "
                           "play in the terminal with 'noughts play' instead")
    if (wayland and _wayland_answers(wayland, env)) or (display and _x_answers(display)):
        return
    where = " or ".join(f"{name}={value}" for name, value in (("DISPLAY", display), ("WAYLAND_DISPLAY", wayland))
                        if value)
    raise NoughtsError(f"no screen answers at {where} (is the X server or desktop session still running?); "
                       "play in the terminal with 'noughts play' instead")


def _connects(family: int, address: str | bytes | tuple[str, int]) -> bool:
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.settimeout(_PROBE_SECONDS)
        try:
            probe.connect(address)
        except OSError:
            return False
    return True


def _x_answers(display: str) -> bool:
    """Whether an X server listens for ``display`` (``:0``, ``unix:0.0``, ``host:10.0``).

    A form this does not understand counts as answering: SDL then tries, and :func:`_open_display`
    still catches a fallback to an invisible window.
    """
    host, colon, rest = display.rpartition(":")
    number = rest.split(".")[0]
    if not colon or not number.isdigit() or "/" in host:
        return True
    if host in ("", "unix"):
        path = f"/tmp/.X11-unix/X{number}"
        # Linux X servers also listen on an abstract socket of the same name (seen across containers)
        return _connects(socket.AF_UNIX, path) or _connects(socket.AF_UNIX, "\0" + path)
    try:  # a TCP display, as ssh -X forwards it: any address the name resolves to will do
        socket.create_connection((host.strip("[]"), 6000 + int(number)), timeout=_PROBE_SECONDS).close()
    except (OSError, UnicodeError, ValueError):
        return False
    return True


def _wayland_answers(name: str, env: Mapping[str, str]) -> bool:
    path = name if name.startswith("/") else os.path.join(env.get("XDG_RUNTIME_DIR", ""), name)
    return bool(env.get("XDG_RUNTIME_DIR") or name.startswith("/")) and _connects(socket.AF_UNIX, path)


def _open_display(env: Mapping[str, str]) -> None:
    """Start SDL's video; a NoughtsError (one line) when no window could be seen."""
    chosen = env.get("SDL_VIDEODRIVER")  # tests choose a driver on purpose
    if not chosen:
        _require_a_screen(env)
    try:
        pygame.display.init()  # display and fonts only: the mixer would open the sound card for nothing
    except pygame.error as error:
        raise NoughtsError(f"the desktop game cannot reach the screen: {' '.join(str(error).split())}; "
                           "play in the terminal with 'noughts play' instead") from None
    driver = pygame.display.get_driver()
    if not chosen and driver in _INVISIBLE:
        pygame.display.quit()
        raise NoughtsError(f"the desktop game found no screen it can show a window on (SDL fell back to its "
                           f"{driver} driver); play in the terminal with 'noughts play' instead")


class App:
    """A window running one :class:`Controller`. Drive it with :meth:`step` or :meth:`run`."""

    def __init__(self, *, rows: int = 3, cols: int = 3, k: int | None = None, opponent: str | None = None,
                 first: str | None = None, best_of: int | None = None, seed: int | None = None,
                 names: list[str] | None = None,
                 store: Store | None = None, think_delay: float = 0.0,
                 window: tuple[int, int] = DEFAULT_WINDOW, environ: Mapping[str, str] | None = None) -> None:
        _open_display(os.environ)
        pygame.font.init()
        try:
            self.surface = pygame.display.set_mode(_at_least(window), pygame.RESIZABLE)
        except pygame.error as error:
            pygame.quit()
            raise NoughtsError(f"the desktop game cannot open a window: {error}") from None
        pygame.display.set_caption("noughts")
        pygame.key.start_text_input()  # names are typed as text: capitals, accents, any layout
        self.store = store
        self.worker = ThreadWorker()
        try:
            self.controller = Controller(
                worker=self.worker, rows=rows, cols=cols, k=k, opponent=opponent, first=first, best_of=best_of,
                seed=seed,
                names=names or [], store=store, think_delay=think_delay, environ=environ)
        except BaseException:
            self.worker.close()
            pygame.quit()
            raise
        self.running = True
        self._pressed: Target | None = None  # what the mouse button went down on
        self.clock = pygame.time.Clock()

    # the loop ------------------------------------------------------------------------------------
    def step(self, wait_ms: int = 0) -> bool:
        """Handle the pending events (waiting up to ``wait_ms`` for one), draw a frame; False once closed."""
        if not self.running:
            return False
        events = pygame.event.get()
        if not events and wait_ms > 0:
            first = pygame.event.wait(wait_ms)
            events = [first, *pygame.event.get()] if first.type != pygame.NOEVENT else []
        for event in events:
            self.handle(event)
            if not self.running:
                return False
        self.draw()
        return True

    def run(self) -> int:
        """Play until the window is closed; returns the exit status (0)."""
        try:
            while self.step(wait_ms=self.idle_wait_ms()):  # the wait keeps an idle window off the CPU
                self.clock.tick(120)
        finally:
            self.close()
        return 0

    def idle_wait_ms(self) -> int:
        """How long the loop may wait for an event: less when the view is about to change by itself."""
        soon = self.controller.seconds_until_change()
        return _IDLE_WAIT_MS if soon is None else max(1, min(_IDLE_WAIT_MS, int(soon * 1000) + 1))

    def close(self) -> None:
        """Stop the worker and close the window. An unfinished game is simply not recorded."""
        self.running = False
        self.worker.close()
        if self.store is not None:
            self.store.close()
        pygame.display.quit()
        forget_fonts()
        pygame.font.quit()

    def draw(self) -> None:
        self.surface = _window_surface()
        draw(self.surface, self.controller.view())
        pygame.display.flip()

    # events --------------------------------------------------------------------------------------
    def target_at(self, pos: tuple[int, int]) -> Target | None:
        return target_at(self.controller.view(), self.surface.get_size(), pos)

    def handle(self, event: pygame.event.Event) -> None:
        controller = self.controller
        if event.type == pygame.QUIT:
            self.running = False
        elif event.type == pygame.VIDEORESIZE:
            size = _at_least(event.size)
            if size != self.surface.get_size():
                self.surface = pygame.display.set_mode(size, pygame.RESIZABLE)
        elif event.type in (pygame.WINDOWRESIZED, pygame.WINDOWSIZECHANGED):
            self.surface = _window_surface()
        elif event.type == pygame.MOUSEMOTION:
            controller.point_at(self.target_at(event.pos))
        elif event.type == pygame.MOUSEBUTTONDOWN and event.button == 1:
            self._pressed = self.target_at(event.pos)
        elif event.type == pygame.MOUSEBUTTONUP and event.button == 1:
            # a click is a press and a release on the same thing, as with any button
            target = self.target_at(event.pos)
            if target is not None and target == self._pressed:
                controller.activate(target)
            self._pressed = None
        elif event.type == pygame.KEYDOWN:
            name = _KEYS.get(event.key)
            if name is not None:
                controller.key(name)
        elif event.type == pygame.TEXTINPUT:
            controller.type_text(event.text)
        elif event.type == JOB_DONE:
            controller.job_done(event.token, event.result, event.error)


def _window_surface() -> pygame.Surface:
    surface = pygame.display.get_surface()
    assert surface is not None, "the window is open while the app runs"
    return surface


def _at_least(size: tuple[int, int]) -> tuple[int, int]:
    return max(MIN_SIZE[0], int(size[0])), max(MIN_SIZE[1], int(size[1]))
