"""A round robin between computer players: results, Elo-style ratings and a chart.

Every pair of players meets with both colours, ``games`` games per pairing and colour. Each
game's players take their randomness from generators seeded by the arena's seed, the two
names and the game's number, so a tournament is reproducible and comes out the same however
many processes play it:

>>> result = run_arena(["random", "arduino"], games=20, seed=1, jobs=1)
>>> result.played, result.complete
(40, True)
>>> run_arena(["random", "arduino"], games=20, seed=1, jobs=1).outcomes == result.outcomes
True
>>> [row.name for row in standings(result)]
['arduino', 'random']

Ratings are Elo-style (400 points: ten to one odds), fitted by maximum likelihood to every
game (a win 1, a draw ½, a loss 0) with one virtual draw per pairing so that a player that
never loses still gets a finite rating; they average 0. Their 95% intervals come from a
percentile bootstrap over games (each pairing's games resampled, the fit repeated).

Games run in worker processes (:mod:`multiprocessing`) in chunks; ``jobs=1`` plays them in
this process. Ctrl-C stops the tournament and keeps the games already finished.
"""

from __future__ import annotations

import math
import os
import random
import signal
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple, TextIO

from noughts import players
from noughts.board import Board, Geometry, Result
from noughts.budget import Budget
from noughts.errors import NoughtsError, UnsupportedBoardError

__all__ = [
    "DEFAULT_NODES", "MAX_GAMES", "POOL_WORTH_SECONDS", "ArenaError", "ArenaResult", "GameRecord", "GameSpec",
    "PairRow", "Progress", "Rating", "Standing", "board_name", "bootstrap_ratings", "chart_svg", "check_players",
    "default_jobs", "fit_ratings", "game_rng", "pair_rows", "parse_board", "play_game", "play_games", "results_json",
    "results_text", "run_arena", "schedule", "standings",
]

DEFAULT_NODES = 100_000
"""Positions a searching player may look at per move in the arena (no time limit: the same on any machine)."""
BOOTSTRAP_SAMPLES = 200
RATING_SCALE = 400 / math.log(10)  # Elo points per unit of natural-log odds
_CHUNK_SECONDS = 0.25  # about how long a chunk of games should take in a worker
MAX_GAMES = 1_000_000
"""The most games one tournament (or one side of a sampled audit) may schedule."""
POOL_WORTH_SECONDS = 1.0
"""Games expected to take less than this (in one process) are played in this process even with ``jobs`` > 1:
starting the workers would cost more than they save."""


class ArenaError(NoughtsError):
    """An arena or audit that cannot run as asked (a player that cannot play the board, bad options)."""


def parse_board(text: str) -> Board:
    """The empty board named like ``3x3k3``, ``4x4`` (k = min(rows, cols, 5)) or ``7x7k5``.

    >>> parse_board("4x5k4").k, parse_board("3x3").k
    (4, 3)
    """
    try:
        rows, cols, k = Geometry.parse(text).shape
    except UnsupportedBoardError as error:
        raise ArenaError(str(error)) from None
    return Board(rows, cols, k)


def board_name(board: Board) -> str:
    """``3x3k3``: the way :func:`parse_board` reads it."""
    return board.geometry.notation


# games ----------------------------------------------------------------------------------------

class GameSpec(NamedTuple):
    """One game of the tournament: who plays X and O, and its number within that pairing and colour."""

    place: int  # its place in the schedule
    x: str
    o: str
    game: int


class GameRecord(NamedTuple):
    """A game of the schedule: how it ended (the one :class:`~noughts.board.Result` shape) and the cells played."""

    place: int  # the game's place in the schedule
    result: Result
    moves: tuple[int, ...]

    @property
    def winner(self) -> str | None:
        """``"X"``, ``"O"`` or ``None`` (a draw)."""
        return self.result.winner


def game_rng(seed: int, x: str, o: str, game: int, side: str) -> random.Random:
    """The generator of ``side``'s player in one game: the same seed, names and number give the same one."""
    return random.Random(f"noughts-arena/{seed}/{x}/{o}/{game}/{side}")


def _budget(nodes: int | None) -> Budget | None:
    return None if nodes is None else Budget(nodes=nodes)


def play_game(spec: GameSpec, shape: tuple[int, int, int], seed: int, nodes: int | None = DEFAULT_NODES) -> GameRecord:
    """Play one game from the empty ``shape`` (rows, cols, k)."""
    budget = _budget(nodes)
    seats = {"X": players.get(spec.x, game_rng(seed, spec.x, spec.o, spec.game, "X"), budget=budget),
             "O": players.get(spec.o, game_rng(seed, spec.x, spec.o, spec.game, "O"), budget=budget)}
    board = Board(*shape)
    moves: list[int] = []
    while not board.is_over:
        side = "X" if board.ply % 2 == 0 else "O"
        try:
            cell = seats[side].choose(board)
        except NoughtsError as error:
            name = spec.x if side == "X" else spec.o
            raise ArenaError(f"{name} could not move in {board} (game {spec.game + 1} of {spec.x} v {spec.o}): "
                             f"{error}") from None
        board = board.play(cell)
        moves.append(cell)
    assert board.result is not None
    return GameRecord(spec.place, board.result, tuple(moves))


def schedule(names: Sequence[str], games: int) -> list[GameSpec]:
    """Every pair of players with both colours, ``games`` games each, in a fixed order."""
    specs: list[GameSpec] = []
    for i, first in enumerate(names):
        for second in names[i + 1:]:
            for x, o in ((first, second), (second, first)):
                for game in range(games):
                    specs.append(GameSpec(len(specs), x, o, game))
    return specs


def _play_chunk(job: tuple[list[GameSpec], tuple[int, int, int], int, int | None]) -> list[GameRecord] | str:
    """A worker's task: a few games, or the message of the error that stopped them."""
    specs, shape, seed, nodes = job
    try:
        return [play_game(spec, shape, seed, nodes) for spec in specs]
    except NoughtsError as error:
        return str(error)


def _quiet_worker() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle


def _chunks(specs: Sequence[GameSpec], size: int) -> Iterator[list[GameSpec]]:
    for start in range(0, len(specs), size):
        yield list(specs[start:start + size])


def default_jobs() -> int:
    """The processes to play in by default: one per core this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on every platform
        return os.cpu_count() or 1


def play_games(specs: Sequence[GameSpec], board: Board, seed: int, *, jobs: int = 1,
               nodes: int | None = DEFAULT_NODES,
               progress: Callable[[int, int], None] | None = None) -> tuple[list[GameRecord], bool]:
    """Play ``specs`` from ``board``'s empty shape: the records finished, and whether all were.

    ``jobs`` > 1 plays them in that many worker processes. Ctrl-C (KeyboardInterrupt) stops
    the games and returns those finished; ``progress(done, total)`` is called as games finish.
    """
    shape = (board.rows, board.cols, board.k)
    records: list[GameRecord] = []
    total = len(specs)

    def finished(batch: list[GameRecord] | str) -> None:
        if isinstance(batch, str):
            raise ArenaError(batch)
        records.extend(batch)
        if progress is not None:
            progress(len(records), total)

    try:
        if jobs <= 1 or total <= 1:
            for spec in specs:
                finished([play_game(spec, shape, seed, nodes)])
            return records, True
        size, each, timed = _chunk_size(specs, shape, seed, nodes, jobs)
        finished(timed)  # the games timed to size the chunks count too
        done = {record.place for record in timed}
        rest = [spec for spec in specs if spec.place not in done]
        if each * len(rest) < POOL_WORTH_SECONDS:
            for spec in rest:
                finished([play_game(spec, shape, seed, nodes)])
            return records, True
        import multiprocessing

        with multiprocessing.get_context().Pool(min(jobs, max(1, len(rest) // size + 1)),
                                                initializer=_quiet_worker) as pool:
            try:
                jobs_list = [(chunk, shape, seed, nodes) for chunk in _chunks(rest, size)]
                for batch in pool.imap_unordered(_play_chunk, jobs_list):
                    finished(batch)
            except BaseException:
                pool.terminate()
                raise
        return records, True
    except KeyboardInterrupt:
        return records, False


def _chunk_size(specs: Sequence[GameSpec], shape: tuple[int, int, int], seed: int, nodes: int | None,
                jobs: int) -> tuple[int, float, list[GameRecord]]:
    """Games per chunk (a chunk should take about _CHUNK_SECONDS, every worker get several chunks), the
    seconds a game takes, and a few games spread over the schedule, played here to time them (pairings
    differ in cost)."""
    timed: list[GameRecord] = []
    started = time.perf_counter()
    sample = max(1, min(8, len(specs) // 8))
    for spec in specs[::max(1, len(specs) // sample)][:sample]:
        timed.append(play_game(spec, shape, seed, nodes))
        if time.perf_counter() - started > _CHUNK_SECONDS:
            break
    each = (time.perf_counter() - started) / len(timed)
    by_time = max(1, int(_CHUNK_SECONDS / max(each, 1e-6)))
    by_spread = max(1, (len(specs) - len(timed)) // (jobs * 4))
    return min(by_time, by_spread), each, timed


# results --------------------------------------------------------------------------------------

@dataclass
class ArenaResult:
    """The games of a tournament: ``outcomes[(x, o)]`` counts X's wins, draws and O's wins."""

    names: list[str]
    board: Board
    games: int
    seed: int
    outcomes: dict[tuple[str, str], list[int]] = field(default_factory=dict)
    played: int = 0
    scheduled: int = 0
    seconds: float = 0.0
    jobs: int = 1

    @property
    def complete(self) -> bool:
        return self.played == self.scheduled

    def add(self, spec: GameSpec, record: GameRecord) -> None:
        counts = self.outcomes.setdefault((spec.x, spec.o), [0, 0, 0])
        counts[0 if record.winner == "X" else 2 if record.winner == "O" else 1] += 1
        self.played += 1


def check_players(names: Sequence[str], board: Board) -> list[str]:
    """The registry names of ``names``, refusing unknown players, repeats and players that cannot play ``board``."""
    if len(names) < 2:
        raise ArenaError("an arena needs at least two players, e.g. noughts arena random arduino perfect")
    found = [players.canonical(name) for name in names]
    repeated = sorted({name for name in found if found.count(name) > 1})
    if repeated:
        raise ArenaError(f"each player takes part once; named more than once: {', '.join(repeated)}")
    for name in found:
        why = players.unable(name, board)
        if why is not None:
            able = ", ".join(players.able(board))
            raise UnsupportedBoardError(f"{players.label(name)} ({name}) cannot play {board_name(board)}: {why}; "
                                        f"players that can: {able}")
    return found


def run_arena(names: Sequence[str], board: Board | None = None, *, games: int = 10, seed: int = 0,
              jobs: int = 1, nodes: int | None = DEFAULT_NODES,
              progress: Callable[[int, int], None] | None = None) -> ArenaResult:
    """Play the round robin of ``names`` on ``board`` (default 3×3): see the module's docstring."""
    board = Board() if board is None else Board(board.rows, board.cols, board.k)
    if not isinstance(games, int) or games < 1:
        raise ArenaError(f"games per pairing and colour must be a whole number from 1, not {games!r}")
    found = check_players(names, board)
    if len(found) * (len(found) - 1) * games > MAX_GAMES:
        raise ArenaError(f"{len(found)} players with {games:,} games per pairing and colour make "
                         f"{len(found) * (len(found) - 1) * games:,} games; at most {MAX_GAMES:,} per arena")
    specs = schedule(found, games)
    result = ArenaResult(found, board, games, seed, {(s.x, s.o): [0, 0, 0] for s in specs},
                         scheduled=len(specs), jobs=jobs)
    started = time.perf_counter()
    records, _ = play_games(specs, board, seed, jobs=jobs, nodes=nodes, progress=progress)
    for record in sorted(records):
        result.add(specs[record.place], record)
    result.seconds = time.perf_counter() - started
    return result


class PairRow(NamedTuple):
    """One pair's games: the first player's wins, the draws and the second player's wins (both colours)."""

    first: str
    second: str
    wins: int
    draws: int
    losses: int
    first_as_x: tuple[int, int, int]  # first's wins, draws, losses with X
    first_as_o: tuple[int, int, int]


def pair_rows(result: ArenaResult) -> list[PairRow]:
    rows = []
    for i, first in enumerate(result.names):
        for second in result.names[i + 1:]:
            as_x = result.outcomes.get((first, second), [0, 0, 0])
            as_o = result.outcomes.get((second, first), [0, 0, 0])
            x_part = (as_x[0], as_x[1], as_x[2])
            o_part = (as_o[2], as_o[1], as_o[0])
            rows.append(PairRow(first, second, x_part[0] + o_part[0], x_part[1] + o_part[1], x_part[2] + o_part[2],
                                x_part, o_part))
    return rows


class Rating(NamedTuple):
    """An Elo-style rating and its 95% interval (low, high)."""

    value: float
    low: float
    high: float


class Standing(NamedTuple):
    name: str
    wins: int
    draws: int
    losses: int
    rating: Rating

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def score(self) -> float:
        """Points per game (a draw is half a point), 0 to 1."""
        return (self.wins + self.draws / 2) / self.games if self.games else 0.0


def _pair_points(result: ArenaResult) -> dict[tuple[str, str], tuple[float, int]]:
    """(first's points, games) for each pair that played."""
    return {(row.first, row.second): (row.wins + row.draws / 2, row.wins + row.draws + row.losses)
            for row in pair_rows(result) if row.wins + row.draws + row.losses}


def fit_ratings(names: Sequence[str], points: dict[tuple[str, str], tuple[float, int]],
                start: dict[str, float] | None = None) -> dict[str, float]:
    """Maximum-likelihood Elo ratings (mean 0) from each pair's points and games.

    Bradley–Terry with draws as half a win, fitted by minorisation–maximisation (Hunter 2004);
    each pair that played gets one virtual draw, so no rating runs off to infinity.

    >>> r = fit_ratings(["a", "b"], {("a", "b"): (75.0, 100)})
    >>> round(r["a"] - r["b"])  # 75.5 points in 101 games: 400·log10(75.5 / 25.5)
    189
    """
    strength = {name: 1.0 for name in names}
    if start:
        strength = {name: math.exp(start.get(name, 0.0) / RATING_SCALE) for name in names}
    won = dict.fromkeys(names, 0.0)
    meetings: dict[str, list[tuple[str, int]]] = {name: [] for name in names}
    for (first, second), (score, games) in points.items():
        total = games + 1  # the virtual draw
        won[first] += score + 0.5
        won[second] += games - score + 0.5
        meetings[first].append((second, total))
        meetings[second].append((first, total))
    for _ in range(10_000):
        biggest = 0.0
        for name in names:
            if not meetings[name]:
                continue
            denominator = sum(games / (strength[name] + strength[other]) for other, games in meetings[name])
            new = won[name] / denominator
            biggest = max(biggest, abs(math.log(new / strength[name])))
            strength[name] = new
        # keep the geometric mean at 1 so the numbers stay tame
        mean = math.exp(sum(math.log(s) for s in strength.values()) / len(strength))
        strength = {name: s / mean for name, s in strength.items()}
        if biggest < 1e-9:
            break
    return {name: RATING_SCALE * math.log(s) for name, s in strength.items()}


def bootstrap_ratings(result: ArenaResult, samples: int = BOOTSTRAP_SAMPLES) -> dict[str, Rating]:
    """Each player's fitted rating with a 95% percentile-bootstrap interval (resampling each pairing's games)."""
    points = _pair_points(result)
    best = fit_ratings(result.names, points)
    rng = random.Random(f"noughts-arena-bootstrap/{result.seed}")
    cells = [(key, counts) for key, counts in sorted(result.outcomes.items()) if sum(counts)]
    draws: dict[str, list[float]] = {name: [] for name in result.names}
    for _ in range(samples if cells else 0):
        totals: dict[tuple[str, str], list[float]] = {}
        for (x, o), counts in cells:
            n = sum(counts)
            picks = rng.choices((0, 1, 2), weights=counts, k=n)
            x_points = picks.count(0) + picks.count(1) / 2
            first, second = (x, o) if result.names.index(x) < result.names.index(o) else (o, x)
            mine = x_points if first == x else n - x_points
            entry = totals.setdefault((first, second), [0.0, 0])
            entry[0] += mine
            entry[1] += n
        fitted = fit_ratings(result.names, {key: (p, int(g)) for key, (p, g) in totals.items()}, start=best)
        for name, value in fitted.items():
            draws[name].append(value)
    ratings = {}
    for name in result.names:
        values = sorted(draws[name])
        if values:
            low = values[int(0.025 * (len(values) - 1))]
            high = values[math.ceil(0.975 * (len(values) - 1))]
        else:
            low = high = best[name]
        ratings[name] = Rating(best[name], min(low, best[name]), max(high, best[name]))
    return ratings


def standings(result: ArenaResult, ratings: dict[str, Rating] | None = None) -> list[Standing]:
    """Each player's wins, draws, losses and rating, best rating first."""
    ratings = bootstrap_ratings(result) if ratings is None else ratings
    tally = {name: [0, 0, 0] for name in result.names}
    for (x, o), (x_wins, draws, o_wins) in result.outcomes.items():
        tally[x][0] += x_wins
        tally[x][1] += draws
        tally[x][2] += o_wins
        tally[o][0] += o_wins
        tally[o][1] += draws
        tally[o][2] += x_wins
    rows = [Standing(name, tally[name][0], tally[name][1], tally[name][2], ratings[name]) for name in result.names]
    return sorted(rows, key=lambda row: (-row.rating.value, -row.score, row.name))


# text, JSON and the chart ---------------------------------------------------------------------

def _table(header: Sequence[str], rows: Iterable[Sequence[str]], right: Iterable[int] = ()) -> list[str]:
    """Columns padded to their widest cell; the columns in ``right`` right-aligned."""
    body = [list(row) for row in rows]
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *body, strict=True)]
    aligned = set(right)
    lines = []
    for row in [list(header), *body]:
        cells = [cell.rjust(width) if i in aligned else cell.ljust(width)
                 for i, (cell, width) in enumerate(zip(row, widths, strict=True))]
        lines.append("  ".join(cells).rstrip())
    return lines


def results_text(result: ArenaResult, table: list[Standing]) -> str:
    """The tournament as text: a header, each pair's games, then the players with their ratings."""
    status = "" if result.complete else f" — stopped after {result.played:,} of {result.scheduled:,} games"
    lines = [f"arena on {board_name(result.board)}: {len(result.names)} players, {result.games} "
             f"{'game' if result.games == 1 else 'games'} per pairing and colour, seed {result.seed}, "
             f"{result.played:,} games in {result.seconds:.1f} s{status}", ""]
    pairs = [(row.first, row.second, str(row.wins), str(row.draws), str(row.losses),
              "{}-{}-{}".format(*row.first_as_x), "{}-{}-{}".format(*row.first_as_o))
             for row in pair_rows(result)]
    lines += _table(("player", "opponent", "wins", "draws", "losses", "as X (w-d-l)", "as O (w-d-l)"), pairs,
                    right=(2, 3, 4))
    lines.append("")
    rows = [(str(place), s.name, str(s.games), str(s.wins), str(s.draws), str(s.losses), f"{100 * s.score:.1f}%",
             f"{s.rating.value:+.0f}", f"{s.rating.low:+.0f} .. {s.rating.high:+.0f}")
            for place, s in enumerate(table, 1)]
    lines += _table(("#", "player", "games", "wins", "draws", "losses", "score", "Elo", "95% interval"), rows,
                    right=(0, 2, 3, 4, 5, 6, 7))
    lines.append("")
    lines.append("Elo: maximum likelihood (draws count half, one virtual draw per pairing), mean 0; "
                 "intervals: percentile bootstrap over games.")
    return "\n".join(lines)


def results_json(result: ArenaResult, table: list[Standing]) -> dict[str, object]:
    """The tournament as plain data (for ``--json``)."""
    return {
        "board": board_name(result.board), "games_per_colour": result.games, "seed": result.seed,
        "played": result.played, "scheduled": result.scheduled, "complete": result.complete,
        "seconds": round(result.seconds, 3), "jobs": result.jobs,
        "pairs": [{"player": row.first, "opponent": row.second, "wins": row.wins, "draws": row.draws,
                   "losses": row.losses, "as_x": list(row.first_as_x), "as_o": list(row.first_as_o)}
                  for row in pair_rows(result)],
        "players": [{"name": s.name, "games": s.games, "wins": s.wins, "draws": s.draws, "losses": s.losses,
                     "score": round(s.score, 4), "elo": round(s.rating.value, 1),
                     "elo_low": round(s.rating.low, 1), "elo_high": round(s.rating.high, 1)} for s in table],
        "ratings": "maximum-likelihood Elo, mean 0; 95% percentile bootstrap over games",
    }


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def chart_svg(result: ArenaResult, table: list[Standing]) -> str:
    """The ratings as horizontal bars from 0 with their 95% intervals as error bars (stdlib SVG)."""
    def note(standing: Standing) -> str:
        rating = standing.rating
        return f"{rating.value:+.0f} ({rating.low:+.0f}..{rating.high:+.0f}), {100 * standing.score:.0f}%"

    char = 7.5  # about the width of a character at 13 px, sans-serif: room for the longest name and note
    label_width = 20 + char * max([8, *(len(s.name) for s in table)])
    bar_width, row_height, top = 420, 30, 58
    width = round(label_width + bar_width + 20 + char * max([20, *(len(note(s)) for s in table)]))
    height = top + row_height * len(table) + 46
    span_low = min([0.0, *(s.rating.low for s in table)])
    span_high = max([0.0, *(s.rating.high for s in table)])
    step = _tick_step(span_high - span_low)
    low = math.floor(span_low / step) * step
    high = math.ceil(span_high / step) * step
    if high == low:
        low, high = low - step, high + step

    def x_of(value: float) -> float:
        return label_width + (value - low) / (high - low) * bar_width

    status = "" if result.complete else f", stopped after {result.played} of {result.scheduled} games"
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="13">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="{width / 2:.0f}" y="22" text-anchor="middle" font-size="16" font-weight="bold">'
        f'{_escape(f"Arena on {board_name(result.board)}: Elo with 95% intervals")}</text>',
        f'<text x="{width / 2:.0f}" y="40" text-anchor="middle" fill="#555">'
        f'{_escape(f"{result.games} games per pairing and colour, seed {result.seed}, {result.played} games{status}")}'
        "</text>",
    ]
    bottom = top + row_height * len(table)
    tick = low
    while tick <= high + step / 2:
        x = x_of(tick)
        parts.append(f'<line x1="{x:.1f}" y1="{top - 4}" x2="{x:.1f}" y2="{bottom}" stroke="#ddd"/>')
        parts.append(f'<text x="{x:.1f}" y="{bottom + 16}" text-anchor="middle" fill="#555">{tick:+.0f}</text>')
        tick += step
    zero = x_of(0.0)
    parts.append(f'<line x1="{zero:.1f}" y1="{top - 4}" x2="{zero:.1f}" y2="{bottom}" stroke="#333"/>')
    parts.append(f'<text x="{label_width + bar_width / 2:.0f}" y="{bottom + 36}" text-anchor="middle" '
                 'fill="#333">Elo (mean 0)</text>')
    for i, standing in enumerate(table):
        y = top + i * row_height
        mid = y + row_height / 2
        value = standing.rating.value
        left, right = sorted((x_of(0.0), x_of(value)))
        colour = "#4a7ebb" if value >= 0 else "#c0504d"
        parts.append(f'<text x="{label_width - 8:.0f}" y="{mid + 4:.1f}" text-anchor="end">'
                     f'{_escape(standing.name)}</text>')
        parts.append(f'<rect x="{left:.1f}" y="{y + 6}" width="{max(right - left, 1):.1f}" height="{row_height - 12}" '
                     f'fill="{colour}"/>')
        lo, hi = x_of(standing.rating.low), x_of(standing.rating.high)
        parts.append(f'<line x1="{lo:.1f}" y1="{mid:.1f}" x2="{hi:.1f}" y2="{mid:.1f}" stroke="black"/>')
        for end in (lo, hi):
            parts.append(f'<line x1="{end:.1f}" y1="{mid - 6:.1f}" x2="{end:.1f}" y2="{mid + 6:.1f}" stroke="black"/>')
        parts.append(f'<text x="{label_width + bar_width + 8:.0f}" y="{mid + 4:.1f}">{_escape(note(standing))}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def _tick_step(span: float) -> float:
    """A round step (1, 2 or 5 times a power of ten) giving about five ticks over ``span``."""
    if span <= 0:
        return 100.0
    rough = span / 5
    power = 10 ** math.floor(math.log10(rough))
    return float(next(m * power for m in (1, 2, 5, 10) if m * power >= rough))


# progress -------------------------------------------------------------------------------------

class Progress:
    """Games done on stderr: one line rewritten in place on a terminal, a line every few seconds elsewhere."""

    def __init__(self, what: str = "arena", stream: TextIO | None = None, every: float = 5.0) -> None:
        self.what = what
        self.stream = sys.stderr if stream is None else stream
        self.every = every
        self.started = time.perf_counter()
        self.last = self.started
        self.terminal = self.stream.isatty()
        self.shown = False

    def _write(self, text: str) -> None:
        self.stream.write(text)
        self.stream.flush()

    def __call__(self, done: int, total: int) -> None:
        now = time.perf_counter()
        if done < total and now - self.last < (0.1 if self.terminal else self.every):
            return
        self.last = now
        line = f"{self.what}: {done:,}/{total:,} games ({100 * done / max(total, 1):.0f}%), {now - self.started:.1f} s"
        if self.terminal:
            self._write(f"\r\033[K{line} (Ctrl-C stops)")
            self.shown = True
        elif done < total:
            self._write(line + "\n")

    def close(self) -> None:
        if self.terminal and self.shown:
            self._write("\r\033[K")
