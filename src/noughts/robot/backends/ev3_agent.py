#!/usr/bin/env python3
"""The noughts agent for a LEGO EV3 brick running ev3dev (seed 003's tic-tac-toe robot).

Copy this one file to the brick and run it there: ``python3 ev3_agent.py --port 4455``. noughts,
on a computer, sends one JSON object per line and gets one line back, ``{"id": ..., "ok": true,
...}`` or ``{"id": ..., "ok": false, "error": CODE, "message": ...}``; the agent keeps serving
whatever it is sent. Commands (``cmd``): hello, configure (ports, signs, speeds, offsets), home
(pen up, then both axes into their rack ends by stall, as the seed's penReset and trackReset),
pen, move, draw (positions in motor degrees from home), light (the colour sensor's readings),
touch, wait_touch, buttons, wait_buttons, show (lines on the screen), beep, and stop (from any
connection: halts whatever runs and lifts the pen). Python 3.5, standard library and python-ev3dev2.
"""

import argparse
import contextlib
import json
import math
import socket
import socketserver
import threading
import time
import traceback
import types

from ev3dev2 import DeviceNotFound
from ev3dev2.motor import LargeMotor, MediumMotor
from ev3dev2.sensor.lego import ColorSensor, TouchSensor

MOTOR_KINDS = {"large": LargeMotor, "medium": MediumMotor}
EXTRAS = {"buttons": ("ev3dev2.button", "Button"), "screen": ("ev3dev2.display", "Display"),
          "speaker": ("ev3dev2.sound", "Sound")}
POLL_S = 0.01
START_GRACE_S = 0.2  # a motor needs a moment to get going before "slow" means "stalled" (the seed waits 200 ms)
ARRIVED_DEG = 3  # a held tacho motor settles within a degree or two of its target
PEN_CLEAR_DEG = 3  # "up" stops just short of the top, so the motor does not strain against it


class AgentError(Exception):
    """A failure the host is told about: a code, a sentence, and details (which motor, where)."""

    def __init__(self, code, message, **details):
        Exception.__init__(self, message)
        self.code, self.details = code, details


def number(request, key, low, high):
    value = request.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
        raise AgentError("bad-arguments", "{} must be a number from {} to {}, not {!r}".format(key, low, high, value))
    return value


def positions(request, key):
    """The request's list of [x, y] positions, in degrees."""
    found = request.get(key)
    if not isinstance(found, list) or not found or not all(isinstance(p, list) and len(p) == 2 for p in found):
        raise AgentError("bad-arguments", "{} must be a list of [x, y] positions in degrees".format(key))
    for point in found:
        for value in point:
            number({"x or y": value}, "x or y", -1e6, 1e6)
    return [tuple(point) for point in found]


class Axis(object):
    """A motor on a rack or a lift; positions in degrees from its home end, positive away from it."""

    def __init__(self, name, motor, home_sign, limit):
        self.name, self.motor, self.home_sign, self.limit = name, motor, home_sign, limit
        self.origin = None  # the encoder's reading at the home end, once found

    def position(self):
        return (self.origin - self.motor.position) * self.home_sign

    def raw(self, position):
        return round(self.origin - position * self.home_sign)


class Agent(object):
    """Carries out requests on the brick's motors, sensors, buttons, screen and speaker. ``clock``
    has ``time()`` and ``sleep()``; the buttons, screen and speaker are ev3dev2's, made when first
    used, unless others are given (the simulator's)."""

    def __init__(self, clock=None, buttons=None, display=None, sound=None):
        # type: (object, object, object, object) -> None
        self.clock = clock or types.SimpleNamespace(time=time.monotonic, sleep=time.sleep)
        self.extras = {"buttons": buttons, "screen": display, "speaker": sound}
        self.lock, self.halt = threading.Lock(), threading.Event()
        self.settings, self.axes = None, {}

    def handle(self, request):
        """The reply (a dict) to one request (a dict); never raises."""
        reply = {"id": request.get("id") if isinstance(request, dict) else None}
        try:
            if not isinstance(request, dict) or not isinstance(request.get("cmd"), str):
                raise AgentError("bad-request", "a request is a JSON object with a \"cmd\"")
            method = getattr(self, "do_" + request["cmd"], None)
            if method is None:
                raise AgentError("unknown-command", "there is no command {!r}".format(request["cmd"]))
            if method == self.do_stop:
                reply.update(method(request), ok=True)
            else:
                with self.lock:
                    self.halt.clear()
                    reply.update(method(request), ok=True)
        except AgentError as error:
            reply.update(ok=False, error=error.code, message=str(error), **error.details)
        except DeviceNotFound as error:  # a cable pulled out mid-game
            reply.update(ok=False, error="no-device", message=str(error))
        except Exception as error:  # the agent keeps serving whatever happens
            traceback.print_exc()
            reply.update(ok=False, error="internal", message="{}: {}".format(type(error).__name__, error))
        return reply

    def do_hello(self, request):
        return {"agent": "noughts-ev3", "version": 1, "configured": self.settings is not None,
                "homed": self.homed()}

    def do_configure(self, request):
        settings = dict((key, value) for key, value in request.items() if key != "id")
        if settings == self.settings:
            return self.do_hello(request)  # a host that reconnects keeps the homing already done
        axes = {}
        for name in ("x", "y", "pen"):
            spec = request.get(name)
            if not isinstance(spec, dict) or spec.get("kind") not in MOTOR_KINDS:
                raise AgentError("bad-arguments", "{} needs a port and a kind, large or medium".format(name))
            motor = self.open(MOTOR_KINDS[spec["kind"]], spec.get("port"), spec["kind"] + " motor")
            limit = 360 if name == "pen" else number(spec, "limit", 1, 1e5)
            axes[name] = Axis(name, motor, 1 if number(spec, "sign", -1, 1) >= 0 else -1, limit)
        self.colour = self.open(ColorSensor, request.get("colour"), "colour sensor")
        self.touch = self.open(TouchSensor, request.get("touch"), "touch sensor")
        speeds = request.get("speeds") if isinstance(request.get("speeds"), dict) else {}
        self.speeds = dict((key, number(speeds, key, 1, 1560)) for key in ("home", "travel", "draw", "pen"))
        self.pen_down = number(request, "pen_down", 1, 180)
        self.sensor_offset = positions({"offset": [request.get("sensor_offset")]}, "offset")[0]
        self.pen_dwell, self.settle = number(request, "pen_dwell", 0, 5), number(request, "settle", 0, 5)
        self.stall_time = number(request, "stall_time", 0.02, 5)
        self.stop_motors()
        self.axes, self.settings = axes, settings
        self.colour.mode = ColorSensor.MODE_COL_REFLECT
        return self.do_hello(request)

    def do_home(self, request):
        self.need()
        pen, x, y = self.axes["pen"], self.axes["x"], self.axes["y"]
        pen.origin = self.run([(pen, None, self.speeds["pen"] / 2)])[0]
        self.pen("up")
        x.origin, y.origin = self.run([(x, None, self.speeds["home"]), (y, None, self.speeds["home"])])
        return {"at": self.where()}

    def do_pen(self, request):
        self.need(homed=True)
        if request.get("state") not in ("up", "down"):
            raise AgentError("bad-arguments", "state must be \"up\" or \"down\"")
        self.pen(request["state"])
        return {}

    def do_move(self, request):
        self.need(homed=True)
        self.pen("up")
        self.move(self.reachable(positions({"to": [request.get("to")]}, "to"))[0], self.speeds["travel"])
        return {"at": self.where()}

    def do_draw(self, request):
        self.need(homed=True)
        points = self.reachable(positions(request, "points"))
        self.pen("up")
        self.move(points[0], self.speeds["travel"])
        try:
            self.pen("down")
            for point in points[1:]:
                self.move(point, self.speeds["draw"])
        finally:
            self.lift_quietly()
        return {"at": self.where()}

    def do_light(self, request):
        """Reflected light (percent) with the colour sensor over each position in turn."""
        self.need(homed=True)
        dx, dy = self.sensor_offset
        values = []
        self.pen("up")
        for point in self.reachable([(x - dx, y - dy) for x, y in positions(request, "points")]):
            self.move(point, self.speeds["travel"])
            self.sleep(self.settle)
            values.append(self.colour.reflected_light_intensity)
        return {"values": values, "at": self.where()}

    def do_touch(self, request):
        self.need()
        return {"pressed": bool(self.touch.is_pressed)}

    def do_wait_touch(self, request):
        """Wait ``timeout`` seconds at most for a press and its release (the seed waits for both)."""
        self.need()
        return {"pressed": bool(self.wait_press(lambda: ["touch"] if self.touch.is_pressed else [], request))}

    def do_buttons(self, request):
        return {"pressed": sorted(self.extra("buttons").buttons_pressed)}

    def do_wait_buttons(self, request):
        """Wait ``timeout`` seconds at most for buttons pressed and all released again: which were."""
        return {"pressed": self.wait_press(lambda: self.extra("buttons").buttons_pressed, request)}

    def do_show(self, request):
        lines = request.get("lines")
        if not isinstance(lines, list) or not all(isinstance(line, str) for line in lines):
            raise AgentError("bad-arguments", "lines must be a list of strings")
        screen = self.extra("screen")
        screen.clear()
        for row, line in enumerate(lines[:12]):  # the screen's text grid: 12 rows of 22 characters
            screen.text_grid(line[:22], clear_screen=False, x=0, y=row)
        screen.update()
        return {}

    def do_beep(self, request):
        self.extra("speaker").beep()
        return {}

    def do_stop(self, request):
        """Halt whatever is running (on any connection), then lift the pen."""
        self.halt.set()
        self.stop_motors()
        with self.lock:
            self.halt.clear()
            self.lift_quietly()
        return {}

    # -- motion -------------------------------------------------------------------------------------
    def stop_motors(self):
        for axis in self.axes.values():
            try:
                axis.motor.stop(stop_action="brake")
            except Exception:  # one motor unplugged must not keep the others running
                traceback.print_exc()

    def pen(self, state):
        self.run([(self.axes["pen"], self.pen_down if state == "down" else PEN_CLEAR_DEG, self.speeds["pen"])])
        self.sleep(self.pen_dwell)

    def lift_quietly(self):
        try:
            if self.homed():
                self.pen("up")
        except AgentError:
            pass

    def move(self, target, speed):
        x, y = self.axes["x"], self.axes["y"]
        dx, dy = target[0] - x.position(), target[1] - y.position()
        length = math.hypot(dx, dy)
        if length >= 0.5:  # speeds in proportion to the distances: both arrive together, the line is straight
            self.run([(x, target[0], speed * abs(dx) / length), (y, target[1], speed * abs(dy) / length)])

    def run(self, runs):
        """Run motors, each (axis, position, speed), and wait. A position of None homes the axis: it
        runs toward its home end until its speed stays near zero (a stall ends its travel); else a
        stall is a "stalled" error. Where each motor's encoder stopped."""
        found, longest = {}, 2.0
        for axis, target, speed in runs:
            if target is None:
                axis.motor.run_forever(speed_sp=int(speed * axis.home_sign), stop_action="coast")
                longest += axis.limit / speed * 1.5
            elif abs(target - axis.position()) >= 1:
                speed = max(1, round(speed))
                axis.motor.run_to_abs_pos(position_sp=axis.raw(target), speed_sp=speed, stop_action="hold")
                longest += abs(target - axis.position()) / speed * 2
            else:
                found[axis.name] = axis.motor.position
        start, slow_since = self.clock.time(), {}
        while len(found) < len(runs):
            self.sleep(POLL_S)
            now = self.clock.time()
            for axis, target, speed in [run for run in runs if run[0].name not in found]:
                state = axis.motor.state
                if target is not None and "running" not in state and abs(axis.position() - target) <= ARRIVED_DEG:
                    found[axis.name] = axis.motor.position
                elif now - start >= START_GRACE_S:  # before then a state may be stale, or the motor slow to start
                    # Very slow motors (the short side of a shallow line), and motors slowing down as they
                    # arrive, are left to the driver's stall flag.
                    near = target is not None and abs(axis.position() - target) <= 3 * ARRIVED_DEG
                    slow = speed >= 20 and not near and abs(axis.motor.speed) < speed / 4
                    slow_since[axis.name] = (slow_since.get(axis.name) or now) if slow else None
                    if "stalled" in state or (slow and now - slow_since[axis.name] >= self.stall_time):
                        if target is not None:
                            self.stalled(axis)
                        axis.motor.stop(stop_action="coast")
                        found[axis.name] = axis.motor.position
            if len(found) < len(runs) and now - start > longest:
                self.stop_motors()
                name = next(run[0].name for run in runs if run[0].name not in found)
                raise AgentError("timeout", "the {} motor did not get where it was going in {:.0f} s".format(
                    name, now - start), motor=name)
        return [found[axis.name] for axis, _, _ in runs]

    def stalled(self, axis):
        self.stop_motors()
        at = round(axis.position())
        if axis.name != "pen":
            self.lift_quietly()
        raise AgentError("stalled", "the {} motor stalled at {} degrees".format(axis.name, at), motor=axis.name, at=at)

    def sleep(self, seconds):
        """Sleep; a stop before or meanwhile is a "stopped" error."""
        if not self.halt.is_set():
            self.clock.sleep(seconds)
        if self.halt.is_set():
            raise AgentError("stopped", "stopped on request")

    def wait_press(self, read, request):
        """Wait until something ``read`` names is pressed and everything is released: what was pressed."""
        deadline, seen = self.clock.time() + number(request, "timeout", 0, 1e6), set()
        while True:
            pressed = set(read())
            seen |= pressed
            if seen and not pressed:
                return sorted(seen)
            if self.clock.time() >= deadline:
                return []
            self.sleep(POLL_S)

    # -- helpers ------------------------------------------------------------------------------------
    def open(self, kind, port, what):
        if not isinstance(port, str):
            raise AgentError("bad-arguments", "the {} needs a port such as outA or in1".format(what))
        try:
            return kind(port)
        except DeviceNotFound:
            raise AgentError("no-device", "there is no {} on port {}; check the cable".format(what, port),
                             port=port) from None

    def extra(self, what):
        """The button reader, screen or speaker: the one given, or ev3dev2's, made when first used."""
        if self.extras[what] is None:
            module, name = EXTRAS[what]
            try:
                self.extras[what] = getattr(__import__(module, fromlist=[name]), name)()
            except Exception as error:
                raise AgentError("no-device", "the brick's {} cannot be used: {}".format(what, error)) from error
        return self.extras[what]

    def homed(self):
        return bool(self.axes) and all(axis.origin is not None for axis in self.axes.values())

    def need(self, homed=False):
        if self.settings is None:
            raise AgentError("not-configured", "send configure first")
        if homed and not self.homed():
            raise AgentError("not-homed", "the robot does not know where it is yet; send home first")

    def reachable(self, points):
        for point in points:
            for axis, value in zip((self.axes["x"], self.axes["y"]), point):
                if not -0.5 <= value <= axis.limit + 0.5:
                    raise AgentError("out-of-range", "{} = {:.0f} degrees is outside 0 to {:.0f}".format(
                        axis.name, value, axis.limit), motor=axis.name)
        return points

    def where(self):
        return [round(self.axes[name].position(), 1) for name in ("x", "y")]


class AgentServer(socketserver.ThreadingTCPServer):
    """Serves one agent to any number of connections, a request a line."""

    daemon_threads = allow_reuse_address = True

    def __init__(self, address, agent):
        self.agent, self.connections = agent, set()
        socketserver.ThreadingTCPServer.__init__(self, address, RequestHandler)

    def server_close(self):
        socketserver.ThreadingTCPServer.server_close(self)
        for connection in list(self.connections):
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)  # wakes its handler, and tells the host


class RequestHandler(socketserver.StreamRequestHandler):
    def handle(self):
        self.server.connections.add(self.connection)
        try:
            for line in iter(lambda: self.rfile.readline(1 << 20), b""):
                try:
                    reply = self.server.agent.handle(json.loads(line.decode("utf-8")))
                except ValueError:
                    reply = {"id": None, "ok": False, "error": "bad-request", "message": "not a JSON line"}
                self.wfile.write((json.dumps(reply) + "\n").encode("utf-8"))
        except OSError:
            pass
        finally:
            self.server.connections.discard(self.connection)


def serve(agent, host="", port=4455):
    # type: (Agent, str, int) -> AgentServer
    """A server for ``agent`` on ``host``:``port`` (port 0: any free one); call its ``serve_forever``."""
    return AgentServer((host, port), agent)


def main(argv=None):
    parser = argparse.ArgumentParser(description="The noughts agent for an EV3 brick (seed 003's robot).")
    parser.add_argument("--host", default="", help="the address to listen on (default: all)")
    parser.add_argument("--port", type=int, default=4455)
    options = parser.parse_args(argv)
    agent = Agent()
    server = serve(agent, options.host, options.port)
    print("noughts agent listening on port {}".format(server.server_address[1]), flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        agent.stop_motors()
        server.server_close()


if __name__ == "__main__":
    main()
