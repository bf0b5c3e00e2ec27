#!/usr/bin/env python3
"""The noughts agent for a LEGO EV3 brick running ev3dev (seed 003's tic-tac-toe robot).

Copy this one file to the brick and start it there::

    python3 ev3_agent.py --port 4455

noughts runs on a computer and sends it one JSON object per line; the agent answers each with one
line, ``{"id": ..., "ok": true, ...}`` or ``{"id": ..., "ok": false, "error": CODE, "message": ...}``.
A bad request gets an error reply and the agent keeps serving. Requests (``cmd``): ``hello``,
``configure`` (ports, signs, speeds, offsets: sent by the host), ``home`` (pen up, then both axes
to their rack ends by stall, as the seed's ``penReset`` and ``trackReset`` do), ``pen`` (up/down),
``move`` and ``draw`` (positions in motor degrees from home), ``light`` (reflected light with the
colour sensor over positions), ``touch``/``wait_touch``, ``buttons``/``wait_buttons``, ``show``
(lines on the screen), ``beep`` and ``stop`` (halts whatever runs, on any connection; pen up).

It is written for the brick's Python 3.5 with the standard library and python-ev3dev2 only.
"""

import argparse
import json
import math
import socket
import socketserver
import sys
import threading
import time
import traceback

from ev3dev2 import DeviceNotFound
from ev3dev2.motor import LargeMotor, MediumMotor
from ev3dev2.sensor.lego import ColorSensor, TouchSensor

MOTOR_KINDS = {"large": LargeMotor, "medium": MediumMotor}
BUTTON_NAMES = ("left", "enter", "right", "up", "down", "backspace")  # enter is the centre button
POLL_S = 0.01
START_GRACE_S = 0.2  # a motor needs a moment to get going before "slow" means "stalled" (the seed waits 200 ms)
ARRIVED_DEG = 2  # a held tacho motor settles within a few degrees of its target
PEN_CLEAR_DEG = 3  # "up" stops just short of the top so the motor does not strain against it
MAX_LINE = 1 << 20


class AgentError(Exception):
    """A failure the host is told about: a code, a sentence, and details (the motor, where)."""

    def __init__(self, code, message, **details):
        Exception.__init__(self, message)
        self.code = code
        self.details = details


class SystemClock(object):
    """Real time; the simulator passes its own clock so its physics may run faster."""

    sleep = staticmethod(time.sleep)  # before "time" is bound in this class body
    time = staticmethod(time.monotonic)


def _number(request, key, low=None, high=None):
    value = request.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        raise AgentError("bad-arguments", "{} must be a number".format(key))
    if (low is not None and value < low) or (high is not None and value > high):
        raise AgentError("bad-arguments", "{} must be between {} and {}, not {}".format(key, low, high, value))
    return value


def _points(request, key="points"):
    points = request.get(key)
    if not isinstance(points, list) or not points:
        raise AgentError("bad-arguments", "{} must be a non-empty list of [x, y] positions".format(key))
    checked = []
    for point in points:
        if not isinstance(point, list) or len(point) != 2:
            raise AgentError("bad-arguments", "each position must be [x, y] in degrees, not {!r}".format(point))
        checked.append((_number({"x": point[0]}, "x"), _number({"y": point[1]}, "y")))
    return checked


class Axis(object):
    """A motor on a rack or a lift. Positions are degrees from its home end, positive away from it."""

    def __init__(self, name, motor, home_sign, limit):
        self.name = name
        self.motor = motor
        self.home_sign = home_sign  # +1 if running the motor forwards goes toward the home end
        self.limit = limit
        self.origin = None  # the raw encoder position at the home end, once found

    def position(self):
        return (self.origin - self.motor.position) * self.home_sign

    def raw(self, position):
        return int(round(self.origin - position * self.home_sign))


class Agent(object):
    """Carries out requests on the brick's motors, sensors, buttons, screen and speaker."""

    def __init__(self, clock=None, buttons=None, display=None, sound=None):
        self.clock = clock or SystemClock()
        self._buttons, self._display, self._sound = buttons, display, sound
        self.lock = threading.Lock()
        self.halt = threading.Event()
        self.settings = None
        self.axes = {}

    # -- requests ---------------------------------------------------------------------------------
    def handle(self, request):
        """The reply (a dict) to one request (a dict); never raises."""
        reply = {"id": request.get("id") if isinstance(request, dict) else None}
        try:
            if not isinstance(request, dict) or not isinstance(request.get("cmd"), str):
                raise AgentError("bad-request", "a request is a JSON object with a \"cmd\"")
            command = request["cmd"]
            method = getattr(self, "do_" + command, None)
            if method is None:
                raise AgentError("unknown-command", "there is no command {!r}".format(command))
            if command == "stop":
                reply.update(method(request))
            else:
                with self.lock:
                    self.halt.clear()
                    reply.update(method(request))
            reply["ok"] = True
        except AgentError as error:
            reply.update(ok=False, error=error.code, message=str(error), **error.details)
        except DeviceNotFound as error:
            reply.update(ok=False, error="no-device", message=str(error))
        except Exception as error:  # the agent must keep serving whatever happens
            traceback.print_exc()
            reply.update(ok=False, error="internal", message="{}: {}".format(type(error).__name__, error))
        return reply

    def do_hello(self, request):
        return {"agent": "noughts-ev3", "version": 1, "configured": self.settings is not None,
                "homed": self._homed()}

    def do_configure(self, request):
        if self.settings is not None and self._same_settings(request):
            return self.do_hello(request)  # a host that reconnects keeps the homing already done
        axes = {}
        for name in ("x", "y", "pen"):
            spec = request.get(name)
            if not isinstance(spec, dict) or spec.get("kind") not in MOTOR_KINDS or not isinstance(
                    spec.get("port"), str):
                raise AgentError("bad-arguments", "{} needs a port and a kind (large or medium)".format(name))
            sign = _number(spec, "sign", -1, 1)
            limit = _number(spec, "limit", 1) if name != "pen" else 360
            motor = self._open(MOTOR_KINDS[spec["kind"]], spec["port"], spec["kind"] + " motor")
            axes[name] = Axis(name, motor, 1 if sign >= 0 else -1, limit)
        self.colour = self._open(ColorSensor, request.get("colour"), "colour sensor")
        self.touch = self._open(TouchSensor, request.get("touch"), "touch sensor")
        speeds = request.get("speeds")
        if not isinstance(speeds, dict):
            raise AgentError("bad-arguments", "speeds must be an object")
        self.speeds = dict((key, _number(speeds, key, 1, 1560)) for key in ("home", "travel", "draw", "pen"))
        self.pen_down_deg = _number(request, "pen_down", 1, 180)
        offset = _points({"offset": [request.get("sensor_offset")]}, "offset")[0]
        self.sensor_offset = offset
        self.pen_dwell = _number(request, "pen_dwell", 0, 5)
        self.settle = _number(request, "settle", 0, 5)
        self.stall_time = _number(request, "stall_time", 0.02, 5)
        self.stop_motors()
        self.axes, self.settings = axes, request
        self.colour.mode = ColorSensor.MODE_COL_REFLECT
        return self.do_hello(request)

    def do_home(self, request):
        self._configured()
        pen = self.axes["pen"]
        pen.origin = self._run_to_stall([pen])[0]
        self._pen("up")
        found = self._run_to_stall([self.axes["x"], self.axes["y"]])
        self.axes["x"].origin, self.axes["y"].origin = found
        return {"at": self._where()}

    def do_pen(self, request):
        self._homed_or_fail()
        if request.get("state") not in ("up", "down"):
            raise AgentError("bad-arguments", "state must be \"up\" or \"down\"")
        self._pen(request["state"])
        return {}

    def do_move(self, request):
        self._homed_or_fail()
        target = _points({"to": [request.get("to")]}, "to")[0]
        self._check_reach([target])
        self._pen("up")
        self._move(target, self.speeds["travel"])
        return {"at": self._where()}

    def do_draw(self, request):
        self._homed_or_fail()
        points = _points(request)
        self._check_reach(points)
        self._pen("up")
        self._move(points[0], self.speeds["travel"])
        try:
            self._pen("down")
            for point in points[1:]:
                self._move(point, self.speeds["draw"])
        finally:
            self._lift_quietly()
        return {"at": self._where()}

    def do_light(self, request):
        self._homed_or_fail()
        dx, dy = self.sensor_offset
        pen_points = [(x - dx, y - dy) for x, y in _points(request)]
        self._check_reach(pen_points)
        self._pen("up")
        values = []
        for point in pen_points:
            self._move(point, self.speeds["travel"])
            self._sleep(self.settle)
            values.append(self.colour.reflected_light_intensity)
        return {"values": values, "at": self._where()}

    def do_touch(self, request):
        self._configured()
        return {"pressed": bool(self.touch.is_pressed)}

    def do_wait_touch(self, request):
        """Wait for a press and its release (the seed waits for both), or until ``timeout`` seconds."""
        self._configured()
        deadline = self.clock.time() + _number(request, "timeout", 0)
        for wanted in (True, False):
            while bool(self.touch.is_pressed) != wanted:
                if self.clock.time() >= deadline:
                    return {"pressed": False}
                self._sleep(POLL_S)
        return {"pressed": True}

    def do_buttons(self, request):
        return {"pressed": sorted(self._button_reader().buttons_pressed)}

    def do_wait_buttons(self, request):
        """Wait until some buttons are pressed and all are released again; say which were pressed."""
        reader = self._button_reader()
        deadline = self.clock.time() + _number(request, "timeout", 0)
        seen = set()
        while True:
            pressed = set(reader.buttons_pressed)
            seen |= pressed
            if seen and not pressed:
                return {"pressed": sorted(seen)}
            if self.clock.time() >= deadline:
                return {"pressed": []}
            self._sleep(POLL_S)

    def do_show(self, request):
        lines = request.get("lines")
        if not isinstance(lines, list) or not all(isinstance(line, str) for line in lines):
            raise AgentError("bad-arguments", "lines must be a list of strings")
        display = self._device("_display", "ev3dev2.display", "Display", "screen")
        display.clear()
        for row, line in enumerate(lines[:12]):  # the screen's text grid: 12 rows of 22 columns
            display.text_grid(line[:22], clear_screen=False, x=0, y=row)
        display.update()
        return {}

    def do_beep(self, request):
        self._device("_sound", "ev3dev2.sound", "Sound", "speaker").beep()
        return {}

    def do_stop(self, request):
        """Halt whatever is running (on any connection), then lift the pen."""
        self.halt.set()
        self.stop_motors()
        with self.lock:
            self.halt.clear()
            self._lift_quietly()
        return {}

    # -- motion -----------------------------------------------------------------------------------
    def stop_motors(self):
        for axis in self.axes.values():
            try:
                axis.motor.stop(stop_action="brake")
            except Exception:  # a motor unplugged mid-game must not stop us stopping the others
                traceback.print_exc()

    def _run_to_stall(self, axes):
        """Run each motor toward its home end until its speed stays near zero; the stall positions."""
        speed = self.speeds["home"] if axes[0].name != "pen" else self.speeds["pen"] / 2
        for axis in axes:
            axis.motor.stop_action = "coast"
            axis.motor.speed_sp = int(speed * axis.home_sign)
            axis.motor.run_forever()
        start = self.clock.time()
        slow_since = dict((axis.name, None) for axis in axes)
        found = {}
        longest = max(axis.limit for axis in axes) / speed * 1.5 + 2
        while len(found) < len(axes):
            self._sleep(POLL_S)
            now = self.clock.time()
            for axis in axes:
                if axis.name in found or now - start < START_GRACE_S:
                    continue
                if abs(axis.motor.speed) < speed * 0.25:
                    slow_since[axis.name] = slow_since[axis.name] or now
                    if now - slow_since[axis.name] >= self.stall_time:
                        axis.motor.stop(stop_action="coast")
                        found[axis.name] = axis.motor.position
                else:
                    slow_since[axis.name] = None
            if now - start > longest:
                self.stop_motors()
                missing = [axis.name for axis in axes if axis.name not in found]
                raise AgentError("home-failed", "the {} motor ran {:.0f} s without reaching the end of its travel"
                                 .format(missing[0], now - start), motor=missing[0])
        return [found[axis.name] for axis in axes]

    def _pen(self, state):
        pen = self.axes["pen"]
        depth = self.pen_down_deg if state == "down" else PEN_CLEAR_DEG
        self._run_axes([(pen, depth)], self.speeds["pen"])
        self._sleep(self.pen_dwell)

    def _lift_quietly(self):
        if self._homed():
            try:
                self._pen("up")
            except AgentError:
                pass

    def _move(self, target, speed):
        x, y = self.axes["x"], self.axes["y"]
        dx, dy = target[0] - x.position(), target[1] - y.position()
        length = math.hypot(dx, dy)
        if length < 0.5:
            return
        # Speeds in proportion to the distances, so both motors arrive together and the line is straight.
        self._run_axes([(x, target[0], speed * abs(dx) / length), (y, target[1], speed * abs(dy) / length)])

    def _run_axes(self, moves, speed=None):
        """Run motors to positions (axis, position[, speed]) and wait; a stall raises a "stalled" error."""
        started, longest = [], 0.0
        for move in moves:
            axis, position = move[0], move[1]
            axis_speed = max(1, int(round(move[2] if len(move) > 2 else speed)))
            distance = abs(position - axis.position())
            if distance < 1:
                continue
            axis.motor.stop_action = "hold"
            axis.motor.speed_sp = axis_speed
            axis.motor.position_sp = axis.raw(position)
            axis.motor.run_to_abs_pos()
            started.append((axis, position, axis_speed))
            longest = max(longest, distance / axis_speed)
        start = self.clock.time()
        slow_since = {}
        while started:
            self._sleep(POLL_S)
            now = self.clock.time()
            for axis, position, axis_speed in list(started):
                state = axis.motor.state
                if "running" not in state and abs(axis.position() - position) <= ARRIVED_DEG:
                    started.remove((axis, position, axis_speed))
                    continue
                if now - start < START_GRACE_S:
                    continue  # a stale state, or a motor still getting going
                # Very slow motors (the short side of a shallow line) are left to the driver's stall flag.
                slow = axis_speed >= 20 and abs(axis.motor.speed) < axis_speed / 4
                slow_since[axis.name] = (slow_since.get(axis.name) or now) if slow else None
                if "stalled" in state or (slow and now - slow_since[axis.name] >= self.stall_time):
                    self._fail_stalled(axis)
            if now - start > longest * 2 + 2:
                self.stop_motors()
                raise AgentError("timeout", "the {} motor did not reach {:.0f} degrees in {:.0f} s".format(
                    started[0][0].name, started[0][1], now - start), motor=started[0][0].name)

    def _fail_stalled(self, axis):
        self.stop_motors()
        at = int(round(axis.position()))
        if axis.name != "pen":
            self._lift_quietly()
        raise AgentError("stalled", "the {} motor stalled at {} degrees".format(axis.name, at), motor=axis.name,
                         at=at)

    def _sleep(self, seconds):
        if self.halt.is_set():
            raise AgentError("stopped", "stopped on request")
        self.clock.sleep(seconds)
        if self.halt.is_set():
            raise AgentError("stopped", "stopped on request")

    # -- helpers ----------------------------------------------------------------------------------
    def _open(self, kind, port, what):
        if not isinstance(port, str):
            raise AgentError("bad-arguments", "the {} needs a port such as outA or in1".format(what))
        try:
            return kind(port)
        except DeviceNotFound:
            raise AgentError("no-device", "there is no {} on port {}; check the cable".format(what, port),
                             port=port)

    def _device(self, attribute, module, name, what):
        """The button reader, screen or speaker: the one given, or ev3dev2's, made when first used."""
        if getattr(self, attribute) is None:
            try:
                setattr(self, attribute, getattr(__import__(module, fromlist=[name]), name)())
            except Exception as error:
                raise AgentError("no-device", "the brick's {} cannot be used: {}".format(what, error))
        return getattr(self, attribute)

    def _button_reader(self):
        return self._device("_buttons", "ev3dev2.button", "Button", "buttons")

    def _same_settings(self, request):
        ignore = ("id",)
        return (dict((k, v) for k, v in request.items() if k not in ignore)
                == dict((k, v) for k, v in self.settings.items() if k not in ignore))

    def _configured(self):
        if self.settings is None:
            raise AgentError("not-configured", "send configure first")

    def _homed(self):
        return bool(self.axes) and all(axis.origin is not None for axis in self.axes.values())

    def _homed_or_fail(self):
        self._configured()
        if not self._homed():
            raise AgentError("not-homed", "the robot does not know where it is yet; send home first")

    def _check_reach(self, points):
        for x, y in points:
            for axis, value in ((self.axes["x"], x), (self.axes["y"], y)):
                if not -0.5 <= value <= axis.limit + 0.5:
                    raise AgentError("out-of-range", "{} = {:.0f} degrees is outside 0 to {:.0f}".format(
                        axis.name, value, axis.limit), motor=axis.name)

    def _where(self):
        return [round(self.axes[name].position(), 1) for name in ("x", "y")]


class AgentServer(socketserver.ThreadingTCPServer):
    """Serves one agent to any number of connections, each line a request."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address, agent):
        self.agent = agent
        self.connections = set()
        socketserver.ThreadingTCPServer.__init__(self, address, RequestHandler)

    def server_close(self):
        socketserver.ThreadingTCPServer.server_close(self)
        for connection in list(self.connections):
            try:
                connection.shutdown(socket.SHUT_RDWR)  # wakes its handler, and tells the host
                connection.close()
            except OSError:
                pass


class RequestHandler(socketserver.StreamRequestHandler):
    def handle(self):
        self.server.connections.add(self.connection)
        try:
            while True:
                line = self.rfile.readline(MAX_LINE)
                if not line:
                    return
                try:
                    request = json.loads(line.decode("utf-8"))
                except ValueError:
                    reply = {"id": None, "ok": False, "error": "bad-request", "message": "not a JSON line"}
                else:
                    reply = self.server.agent.handle(request)
                self.wfile.write((json.dumps(reply) + "\n").encode("utf-8"))
        except OSError:
            return
        finally:
            self.server.connections.discard(self.connection)


def serve(agent, host="", port=4455):
    """A server for ``agent`` on ``host``:``port`` (port 0 picks a free one); call its serve_forever."""
    return AgentServer((host, port), agent)


def main(argv=None):
    parser = argparse.ArgumentParser(description="The noughts agent for an EV3 brick (seed 003's robot).")
    parser.add_argument("--host", default="", help="the address to listen on (default: all)")
    parser.add_argument("--port", type=int, default=4455)
    options = parser.parse_args(argv)
    agent = Agent()
    server = serve(agent, options.host, options.port)
    print("noughts agent listening on port {}".format(server.server_address[1]))
    sys.stdout.flush()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        agent.stop_motors()
        server.server_close()


if __name__ == "__main__":
    main()
