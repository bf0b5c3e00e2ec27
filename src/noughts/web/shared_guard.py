"""Per-address limits over every server process, kept in Redis (``noughts web --redis``).

:class:`~noughts.web.guard.Guard` counts what one process has seen; with ``--workers N`` (or N
servers behind a proxy) an address would get N times each share. :class:`SharedGuard` keeps the
counts in the same Redis as the rooms, each change one atomic script timed by Redis's clock:

- ``noughts:address:KEY:rooms``, the codes of the rooms the address made, and a place for each
  room it is making (a set, checked and added to in one script, so rooms made at the same
  instant on any process never pass the cap together; when the address is at its cap, codes
  whose room has expired and places never used are dropped, at most every ``LOOK_EVERY`` s,
  noted in ``noughts:address:KEY:looked``: a refusal costs one small script);
- ``noughts:address:KEY:joins``, its join allowance (a token bucket), and
  ``noughts:address:KEY:failed``, its failed joins and lockout (as in one process);
- ``noughts:address:KEY:connections``, its open connections by process (a hash); a process
  that stopped beating its heart (``noughts:processes``, see :mod:`noughts.web.shared`) no
  longer counts.

Every key expires once it has nothing left to remember. The message rate per address stays
per process (it is checked on every message, and a round trip each would cost more than it
saves). If Redis does not answer, the in-process counts still hold: the guard fails open to them.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from redis.exceptions import RedisError

from noughts.text import web_locked_out, web_rooms_per_address, web_too_many_joins
from noughts.web.guard import LONGEST_LOCKOUT, LOOK_EVERY, Guard, TrustedProxies
from noughts.web.protocol import Limits, Rejection

if TYPE_CHECKING:
    from redis.asyncio import Redis

    from noughts.web.rooms import RoomStore

__all__ = ["SharedGuard"]

log = logging.getLogger("noughts.web")

PLACE_SECONDS = 120  # a place held this long for a room never made (its process died) is given back

_NOW = """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1000000
"""

# KEYS: the address's rooms, every room (the rooms' index), the address's last look. ARGV: the cap, a name
# for the place, the set's life (ms), seconds between looks, seconds a place may be held. Returns
# {-1, the place} when one is held (a member '+SECONDS:NAME'), else {the rooms held, ''}.
_RESERVE = """
local clock = redis.call('TIME')
local now, cap = tonumber(clock[1]), tonumber(ARGV[1])
local held = redis.call('SCARD', KEYS[1])
if held >= cap and redis.call('SET', KEYS[3], '1', 'NX', 'EX', ARGV[4]) then
  for _, code in ipairs(redis.call('SMEMBERS', KEYS[1])) do
    local since = tonumber(string.match(code, '^%+(%d+):'))
    if (since and now - since > tonumber(ARGV[5])) or (not since and not redis.call('ZSCORE', KEYS[2], code)) then
      redis.call('SREM', KEYS[1], code)
    end
  end
  held = redis.call('SCARD', KEYS[1])
end
if held >= cap then return {held, ''} end
local place = '+' .. clock[1] .. ':' .. ARGV[2]
redis.call('SADD', KEYS[1], place)
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {-1, place}
"""

# KEYS: the address's failures, its joins. ARGV: burst, rate. Returns {'ok'|'locked'|'slow', seconds}.
_JOIN = _NOW + """
local locked = tonumber(redis.call('HGET', KEYS[1], 'until') or '0')
if now < locked then return {'locked', string.format('%.3f', locked - now)} end
local burst, rate = tonumber(ARGV[1]), tonumber(ARGV[2])
local allowance = tonumber(redis.call('HGET', KEYS[2], 'a') or ARGV[1])
local stamp = tonumber(redis.call('HGET', KEYS[2], 's') or now)
allowance = math.min(burst, allowance + (now - stamp) * rate)
local answer = 'ok'
if allowance < 1 then answer = 'slow' else allowance = allowance - 1 end
redis.call('HSET', KEYS[2], 'a', string.format('%.6f', allowance), 's', string.format('%.6f', now))
redis.call('PEXPIRE', KEYS[2], math.ceil((burst / rate + 1) * 1000))
return {answer, '0'}
"""

# KEYS: the address's failures. ARGV: failed joins before a lockout, the first lockout (s), the longest.
# Returns the seconds of a lockout that this failure began ('0': none).
_FAILED = _NOW + """
local held = redis.call('HMGET', KEYS[1], 'count', 'lockouts', 'last', 'until')
local count, lockouts = tonumber(held[1] or '0'), tonumber(held[2] or '0')
local last, locked = tonumber(held[3] or '0'), tonumber(held[4] or '0')
local lockout, longest = tonumber(ARGV[2]), tonumber(ARGV[3])
if lockouts > 0 and now - last > lockout * 60 then lockouts = 0 end
count = count + 1
local began = 0
if count >= tonumber(ARGV[1]) then
  lockouts = lockouts + 1
  count = 0
  began = math.min(lockout * 2 ^ (lockouts - 1), longest)
  locked = now + began
end
redis.call('HSET', KEYS[1], 'count', count, 'lockouts', lockouts, 'last', string.format('%.6f', now),
           'until', string.format('%.6f', locked))
redis.call('PEXPIRE', KEYS[1], math.ceil((lockout * 60 + longest) * 1000))
return string.format('%.3f', began)
"""

# KEYS: the address's connections, the live processes. ARGV: this process, the cap, +1 or -1.
# Fields of processes no longer alive are dropped. Returns 1 if counted (or released), 0 if over.
_CONNECTIONS = """
local held = redis.call('HGETALL', KEYS[1])
local total = 0
for i = 1, #held, 2 do
  if held[i] ~= ARGV[1] and not redis.call('ZSCORE', KEYS[2], held[i]) then
    redis.call('HDEL', KEYS[1], held[i])
  else
    total = total + tonumber(held[i + 1])
  end
end
if ARGV[3] == '1' then
  if total >= tonumber(ARGV[2]) then return 0 end
  redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
  redis.call('PEXPIRE', KEYS[1], 86400000)
  return 1
end
if redis.call('HINCRBY', KEYS[1], ARGV[1], -1) <= 0 then redis.call('HDEL', KEYS[1], ARGV[1]) end
return 1
"""


class SharedGuard(Guard):
    """A :class:`Guard` whose per-address counts are shared by every process on one Redis (see the module)."""

    def __init__(self, limits: Limits, client: Redis, process: str, prefix: str = "noughts:",
                 trusted: TrustedProxies | None = None) -> None:
        super().__init__(limits, trusted=trusted)
        self.client = client
        self.process = process  # this process's name in the heartbeat set (noughts.web.shared)
        self.prefix = prefix
        self._join = client.register_script(_JOIN)
        self._failed = client.register_script(_FAILED)
        self._connections = client.register_script(_CONNECTIONS)
        self._reserve = client.register_script(_RESERVE)
        self._places = itertools.count()
        self._counted: dict[object, str] = {}  # connections counted in Redis → their address
        self._confirming: dict[object, asyncio.Task[None]] = {}
        self._left_early: set[object] = set()  # closed before Redis answered: uncounted once it does
        self._tasks: set[asyncio.Task[Any]] = set()

    def _key(self, key: str, what: str) -> str:
        return f"{self.prefix}address:{key}:{what}"

    def _spawn(self, work: Any) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)  # a task nobody references can be collected mid-flight
        task.add_done_callback(self._tasks.discard)
        return task

    # rooms --------------------------------------------------------------------------------------
    async def reserve_room(self, key: str, rooms: RoomStore) -> str | None:
        await super().reserve_room(key, rooms)  # this process's count first: no round trip to refuse it
        try:
            held, place = await self._reserve(
                keys=[self._key(key, "rooms"), f"{self.prefix}rooms", self._key(key, "looked")],
                args=[self.limits.rooms_for_one_address, f"{self.process}:{next(self._places)}", self._lifetime_ms,
                      int(LOOK_EVERY), PLACE_SECONDS])
        except RedisError as error:
            log.warning("Redis did not answer for the per-address rooms; this process's count holds: %s", error)
            return None
        held = int(held)
        if held >= 0:
            super().unreserve(key)
            raise Rejection("too_many_rooms", web_rooms_per_address(held))
        return place.decode() if isinstance(place, bytes) else str(place)

    @property
    def _lifetime_ms(self) -> int:
        return int((self.limits.room_ttl + 60) * 1000)

    def unreserve(self, key: str, place: str | None = None) -> None:
        super().unreserve(key)
        if place is not None:
            self._spawn(self._give_back(key, place))

    async def _give_back(self, key: str, place: str) -> None:
        with contextlib.suppress(RedisError):  # else dropped after PLACE_SECONDS at the address's cap
            await self.client.srem(self._key(key, "rooms"), place)

    async def created(self, key: str, code: str, place: str | None = None) -> None:
        await super().created(key, code)
        codes_key = self._key(key, "rooms")
        try:
            async with self.client.pipeline(transaction=True) as pipe:  # the place becomes the room, in one step
                if place is not None:
                    pipe.srem(codes_key, place)
                pipe.sadd(codes_key, code)
                pipe.pexpire(codes_key, self._lifetime_ms)
                await pipe.execute()
        except RedisError as error:
            log.warning("Redis did not answer for the per-address rooms: %s", error)

    def gone(self, codes: list[str]) -> None:
        owners = [(self._owner.get(code), code) for code in codes]
        super().gone(codes)
        known = [(key, code) for key, code in owners if key is not None]
        if known:
            self._spawn(self._forget_rooms(known))

    async def _forget_rooms(self, owned: list[tuple[str, str]]) -> None:
        with contextlib.suppress(RedisError):  # else dropped when the address next reaches its cap
            async with self.client.pipeline(transaction=False) as pipe:
                for key, code in owned:
                    pipe.srem(self._key(key, "rooms"), code)
                await pipe.execute()

    # joins --------------------------------------------------------------------------------------
    async def may_join(self, key: str) -> None:
        limits = self.limits
        try:
            answer, seconds = await self._join(keys=[self._key(key, "failed"), self._key(key, "joins")],
                                               args=[repr(limits.join_burst), repr(limits.join_rate)])
        except RedisError as error:
            log.warning("Redis did not answer for the per-address joins; this process's count holds: %s", error)
            await super().may_join(key)
            return
        if answer == "locked":
            wait = math.ceil(float(seconds))
            raise Rejection("locked_out", web_locked_out(wait))
        if answer == "slow":
            self.spend_messages(key, limits.refused_join_cost)
            raise Rejection("too_many_joins", web_too_many_joins(limits.join_rate))

    async def failed_join(self, key: str) -> None:
        limits = self.limits
        try:
            began = float(await self._failed(keys=[self._key(key, "failed")],
                                             args=[limits.failed_joins, repr(limits.lockout), repr(LONGEST_LOCKOUT)]))
        except RedisError as error:
            log.warning("Redis did not answer for the per-address failed joins: %s", error)
            await super().failed_join(key)
            return
        if began > 0:
            log.warning("an address is locked out for %.0f s after %d joins of unknown games or with wrong tokens",
                        began, limits.failed_joins)

    # connections --------------------------------------------------------------------------------
    def confirm(self, key: str, connection: Any, refuse: Callable[[], None]) -> None:
        """Count the connection in Redis; nothing is read from it until Redis agrees (or ``refuse`` is called)."""
        pause = getattr(connection, "pause_reading", None)
        if pause is not None:
            pause()
        task = self._spawn(self._confirm(key, connection, refuse))
        self._confirming[connection] = task
        task.add_done_callback(lambda _: self._confirming.pop(connection, None))

    async def _confirm(self, key: str, connection: Any, refuse: Callable[[], None]) -> None:
        admitted = await self.admit_shared(key, connection)
        if connection in self._left_early:
            self._left_early.discard(connection)
            if admitted:
                self.release(connection)
            return
        if not admitted:
            refuse()
            return
        resume = getattr(connection, "resume_reading", None)
        if resume is not None:
            resume()

    async def admit_shared(self, key: str, connection: object) -> bool:
        try:
            counted = await self._connections(keys=[self._key(key, "connections"), f"{self.prefix}processes"],
                                              args=[self.process, self.limits.connections_per_address, "1"])
        except RedisError as error:
            log.warning("Redis did not answer for the per-address connections; this process's count holds: %s",
                        error)
            return True
        if int(counted):
            self._counted[connection] = key
            return True
        return False

    def release(self, connection: object) -> None:
        super().release(connection)
        key = self._counted.pop(connection, None)
        if key is not None:
            self._spawn(self._uncount(key))
        elif connection in self._confirming:
            self._left_early.add(connection)

    async def _uncount(self, key: str) -> None:
        with contextlib.suppress(RedisError):  # else the count goes with this process's heartbeat
            await self._connections(keys=[self._key(key, "connections"), f"{self.prefix}processes"],
                                    args=[self.process, self.limits.connections_per_address, "-1"])
