"""How a computer player can be beaten: every position it can reach, checked against the solver.

On boards of up to nine cells (3×3 and smaller) the audit is exhaustive. It walks every game
the player can play, as X and as O: at the player's turns every move it may pick (a player
that breaks ties at random may pick any of its ``candidates``), at the opponent's every legal
reply. It answers

* whether the player can lose at all, and the shortest game in which it does;
* whether the opponent can *force* a win: a strategy (one reply per position) that wins
  whatever the player picks, the fastest such, with every game it leads to;
* which of the player's moves throw away a win or a draw: the solver's value of the position
  before the move against the value after it.

>>> report = audit("parsons", sides="O")
>>> side = report.sides[0]
>>> side.can_lose, side.forced_plies, " ".join(Board().cell_name(c) for c in side.forced_games[0])
(True, 7, 'a1 b2 b3 c1 a3 c3 a2')
>>> audit("newell-simon").never_loses
True

On bigger boards the player plays sampled games against an opponent (``random`` unless told)
and the answer is a statement with a confidence: "no loss in 1,000 games: with 95% confidence
its loss rate against random is below 0.30%" (the one-sided Clopper–Pearson bound, which for
no losses is about 3/N).
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from noughts import players, solver
from noughts.arena import MAX_GAMES, ArenaError, GameSpec, board_name, play_games
from noughts.board import Board
from noughts.budget import Budget
from noughts.errors import BudgetExceeded, NoughtsError, UnsupportedBoardError
from noughts.players.base import Player
from noughts.text import plural

__all__ = [
    "EXHAUSTIVE_MAX_CELLS", "TABLE_BEGIN", "TABLE_END", "AuditReport", "Blunder", "SideAudit", "audit",
    "builtin_names", "builtin_reports", "loss_rate_bound", "markdown_table", "moves_of",
    "report_json", "report_text", "write_pictures",
]

EXHAUSTIVE_MAX_CELLS = 9
"""Boards with at most this many cells are audited exhaustively; bigger ones by sampled games."""
DEFAULT_SAMPLES = 200
CHECK_NODES = 50_000
"""Positions the solver may search to judge one sampled move (no time limit: the same on any machine)."""
JUDGE_NODES = 1_000_000
"""Positions it may search to judge all the moves of one side's sampled games; the rest are not judged."""
_analyses: dict[tuple[int, int, int, int], solver.Analysis] = {}  # (rows, cols, k, key) -> analysis, kept per process


def moves_of(player: Player, board: Board) -> tuple[int, ...]:
    """Every cell ``player`` may choose on ``board``: its ``candidates`` if it has them, else its one choice."""
    candidates: Callable[[Board], tuple[int, ...]] | None = getattr(player, "candidates", None)
    return tuple(candidates(board)) if candidates is not None else (player.choose(board),)


def _analysis(board: Board, budget: Budget | None = None) -> solver.Analysis:
    key = (board.rows, board.cols, board.k, board.key)
    found = _analyses.get(key)
    if found is None:
        found = _analyses[key] = solver.analyse(board, budget=budget)
    return found


@dataclass
class Blunder:
    """A move that throws away a result: ``before`` the position's value for the player, ``after`` the move's."""

    position: Board
    cell: int
    before: int
    after: int
    best: tuple[int, ...]  # the moves that keep ``before``

    def describe(self) -> str:
        words = {1: "win", 0: "draw", -1: "loss"}
        name = self.position.cell_name
        return (f"{self.position}: plays {name(self.cell)} ({words[self.before]} → {words[self.after]}); "
                f"keeping the {words[self.before]}: {' '.join(name(c) for c in self.best)}")


@dataclass
class SideAudit:
    """The audit of one side (``"X"`` or ``"O"``)."""

    side: str
    exhaustive: bool
    positions: int = 0  # positions (distinct) where the player was to move
    moves: int = 0  # (position, move) pairs the player may make there
    can_lose: bool = False
    shortest_loss: tuple[int, ...] | None = None  # a shortest game it loses (exhaustive: over all games)
    forced: dict[str, int] | None = None  # the opponent's winning strategy: position -> cell (exhaustive only)
    forced_plies: int | None = None  # the most plies that strategy needs
    forced_games: list[tuple[int, ...]] = field(default_factory=list)  # every game it leads to
    throws_win: list[Blunder] = field(default_factory=list)
    throws_draw: list[Blunder] = field(default_factory=list)
    unchecked: int = 0  # moves the solver could not judge (sampled boards)
    games: int = 0  # sampled games
    wins: int = 0
    draws: int = 0
    losses: int = 0
    loss_bound: float | None = None  # sampled: the loss rate's upper bound at the report's confidence


@dataclass
class AuditReport:
    name: str
    board: Board
    sides: list[SideAudit]
    seconds: float = 0.0
    opponent: str | None = None  # sampled: who the player met
    confidence: float = 0.95
    complete: bool = True

    @property
    def never_loses(self) -> bool:
        return not any(side.can_lose for side in self.sides)


# exhaustive -----------------------------------------------------------------------------------

def _exhaustive(player: Player, start: Board, side: str) -> SideAudit:
    positions, children = _walk(player, start, side)
    other = "O" if side == "X" else "X"
    report = SideAudit(side, exhaustive=True)
    infinity = math.inf
    forced: dict[int, float] = {}  # plies until the opponent wins by force (inf: it cannot)
    shortest: dict[int, float] = {}  # plies until the player's soonest possible loss

    def order(keys: Iterator[int]) -> list[int]:  # children before parents: more marks first
        return sorted(keys, key=lambda key: -positions[key].ply)

    for key in order(iter(positions)):
        board = positions[key]
        if board.is_over:
            lost = board.winner == other
            forced[key] = shortest[key] = 0 if lost else infinity
            continue
        branch = children[key]
        shortest[key] = 1 + min(shortest[child] for _, child in branch)
        if board.turn == side:
            forced[key] = 1 + max(forced[child] for _, child in branch)
        else:
            forced[key] = 1 + min(forced[child] for _, child in branch)
    root = start.key
    report.can_lose = shortest[root] < infinity
    if report.can_lose:
        line: list[int] = []
        key = root
        while shortest[key]:
            cell, key = min(children[key], key=lambda move: (shortest[move[1]], move[0]))
            line.append(cell)
        report.shortest_loss = tuple(line)
    if forced[root] < infinity:
        report.forced_plies = int(forced[root])
        report.forced = {}
        _follow(positions, children, forced, root, side, [], report)
    for key, board in positions.items():
        if board.is_over or board.turn != side:
            continue
        report.positions += 1
        analysis = _analysis(board)
        values = {move.index: move.value for move in analysis.moves}
        keeping = tuple(cell for cell, value in values.items() if value == analysis.value)
        for cell, _ in children[key]:
            report.moves += 1
            if values[cell] < analysis.value and analysis.value >= 0:
                blunder = Blunder(board, cell, analysis.value, values[cell], keeping)
                (report.throws_win if analysis.value == 1 else report.throws_draw).append(blunder)
    for found in (report.throws_win, report.throws_draw):
        found.sort(key=lambda b: (b.position.ply, str(b.position), b.cell))
    return report


def _walk(player: Player, start: Board, side: str) -> tuple[dict[int, Board], dict[int, list[tuple[int, int]]]]:
    """Every position reachable from ``start`` with the player on ``side``, and each one's moves: (cell, child key)."""
    positions: dict[int, Board] = {}
    children: dict[int, list[tuple[int, int]]] = {}
    stack = [start]
    while stack:
        board = stack.pop()
        if board.key in positions:
            continue
        positions[board.key] = board
        if board.is_over:
            continue
        cells = moves_of(player, board) if board.turn == side else board.legal_moves
        branch = []
        for cell in cells:
            child = board.play(cell)
            branch.append((cell, child.key))
            if child.key not in positions:
                stack.append(child)
        children[board.key] = branch
    return positions, children


def _follow(positions: dict[int, Board], children: dict[int, list[tuple[int, int]]], forced: dict[int, float],
            key: int, side: str, moves: list[int], report: SideAudit) -> None:
    """Record the opponent's fastest forcing strategy from ``key`` and every game it leads to."""
    board = positions[key]
    if board.is_over:
        report.forced_games.append(tuple(moves))
        return
    assert report.forced is not None
    if board.turn == side:
        branch = children[key]
    else:
        cell, child = min(children[key], key=lambda move: (forced[move[1]], move[0]))
        report.forced[str(board)] = cell
        branch = [(cell, child)]
    for cell, child in branch:
        _follow(positions, children, forced, child, side, [*moves, cell], report)


# sampled --------------------------------------------------------------------------------------

def loss_rate_bound(losses: int, games: int, confidence: float) -> float:
    """The one-sided Clopper–Pearson upper bound on a rate seen ``losses`` times in ``games``.

    >>> round(loss_rate_bound(0, 1000, 0.95) * 1000, 2)  # the "rule of three": about 3/N
    2.99
    """
    if games <= 0:
        return 1.0
    if losses >= games:
        return 1.0
    if losses == 0:
        return 1 - math.pow(1 - confidence, 1 / games)
    tail = 1 - confidence

    def cdf(p: float) -> float:  # P(at most `losses` losses in `games` at rate p)
        log_p, log_q = math.log(p), math.log1p(-p)
        return sum(math.exp(math.lgamma(games + 1) - math.lgamma(i + 1) - math.lgamma(games - i + 1)
                            + i * log_p + (games - i) * log_q) for i in range(losses + 1))

    low, high = losses / games, 1.0
    for _ in range(60):
        middle = (low + high) / 2
        if cdf(middle) > tail:
            low = middle
        else:
            high = middle
    return high


def _sampled(name: str, board: Board, side: str, opponent: str, samples: int, seed: int, jobs: int,
             confidence: float, progress: Callable[[int, int], None] | None,
             check: bool) -> tuple[SideAudit, bool]:
    report = SideAudit(side, exhaustive=False)
    if side == "X":
        specs = [GameSpec(i, name, opponent, i) for i in range(samples)]
    else:
        specs = [GameSpec(i, opponent, name, i) for i in range(samples)]
    records, complete = play_games(specs, board, seed, jobs=jobs, progress=progress)
    decisions: dict[tuple[int, int], tuple[Board, int]] = {}
    for record in sorted(records):
        report.games += 1
        if record.winner == side:
            report.wins += 1
        elif record.winner is None:
            report.draws += 1
        else:
            report.losses += 1
            if report.shortest_loss is None or len(record.moves) < len(report.shortest_loss):
                report.shortest_loss = record.moves
        position = Board(board.rows, board.cols, board.k)
        for cell in record.moves:
            if position.turn == side:
                decisions.setdefault((position.key, cell), (position, cell))
            position = position.play(cell)
    report.can_lose = report.losses > 0
    report.loss_bound = loss_rate_bound(report.losses, report.games, confidence)
    report.moves = len(decisions)
    report.positions = len({key for key, _ in decisions})
    total = Budget(nodes=JUDGE_NODES)
    for position, cell in decisions.values():
        if not check or total.exhausted:
            report.unchecked += 1
            continue
        budget = total.limited(nodes=CHECK_NODES)
        try:
            analysis = _analysis(position, budget)
        except BudgetExceeded:
            report.unchecked += 1
            continue
        finally:
            total.spent += budget.spent
        values = {move.index: move.value for move in analysis.moves}
        if values[cell] < analysis.value and analysis.value >= 0:
            keeping = tuple(c for c, value in values.items() if value == analysis.value)
            blunder = Blunder(position, cell, analysis.value, values[cell], keeping)
            (report.throws_win if analysis.value == 1 else report.throws_draw).append(blunder)
    return report, complete


# the audit ------------------------------------------------------------------------------------

def audit(name: str, board: Board | None = None, *, sides: str = "both", samples: int | None = None,
          confidence: float = 0.95, opponent: str = "random", seed: int = 0, jobs: int = 1,
          progress: Callable[[int, int], None] | None = None) -> AuditReport:
    """Audit the player called ``name`` on ``board`` (the empty 3×3 by default) as X, O or both.

    Exhaustive on boards of up to :data:`EXHAUSTIVE_MAX_CELLS` cells unless ``samples`` is
    given; otherwise ``samples`` games per side (default :data:`DEFAULT_SAMPLES`) against
    ``opponent``, seeded by ``seed`` and played in ``jobs`` processes.
    """
    board = Board() if board is None else Board(board.rows, board.cols, board.k)
    chosen = {"x": ["X"], "o": ["O"], "both": ["X", "O"]}.get(str(sides).strip().lower())
    if chosen is None:
        raise ArenaError(f"audit as X, O or both, not {str(sides)[:20]!r}")
    if not 0 < confidence < 1:
        raise ArenaError(f"the confidence is a fraction between 0 and 1, like 0.95, not {confidence!r}")
    if samples is not None and not 1 <= samples <= MAX_GAMES:
        raise ArenaError(f"the number of sampled games must be a whole number from 1 to {MAX_GAMES:,}, not {samples!r}")
    exhaustive = samples is None and board.size <= EXHAUSTIVE_MAX_CELLS
    started = time.perf_counter()
    if exhaustive:
        canonical = _able(name, board)
        player = players.get(canonical, random.Random(0))  # the audit reads its candidates, not its draws
        report = AuditReport(canonical, board, [])
        for side in chosen:
            try:
                report.sides.append(_exhaustive(player, board, side))
            except NoughtsError as error:
                raise ArenaError(f"{canonical} could not be audited: {error}") from None
    else:
        canonical = _able(name, board)
        opponent_name = _able(opponent, board)
        report = AuditReport(canonical, board, [], opponent=opponent_name, confidence=confidence)
        check = players.unable("perfect", board) is None
        count = samples or DEFAULT_SAMPLES
        for number, side in enumerate(chosen):
            def counted(done: int, total: int, before: int = number * count) -> None:
                if progress is not None:  # one count over both sides
                    progress(before + done, count * len(chosen))

            part, complete = _sampled(canonical, board, side, opponent_name, count, seed, jobs,
                                      confidence, counted, check)
            report.sides.append(part)
            if not complete:
                report.complete = False
                break
    report.seconds = time.perf_counter() - started
    return report


def _able(name: str, board: Board) -> str:
    """The registry name of ``name``, refusing a player that cannot play ``board``."""
    canonical = players.canonical(name)
    why = players.unable(canonical, board)
    if why is not None:
        raise UnsupportedBoardError(f"{players.label(canonical)} ({canonical}) cannot play {board_name(board)}: "
                                    f"{why}; players that can: {', '.join(players.able(board))}")
    return canonical


# reports --------------------------------------------------------------------------------------

def _line(board: Board, moves: tuple[int, ...]) -> str:
    return " ".join(board.cell_name(cell) for cell in moves)


def _end(start: Board, moves: tuple[int, ...]) -> Board:
    for cell in moves:
        start = start.play(cell)
    return start


def _diagram(board: Board, last: int | None = None) -> str:
    from noughts.text import board_diagram

    return board_diagram(board, last=last, line=board.winning_line)


def report_text(report: AuditReport, show: int = 3) -> str:
    """The audit as text, with up to ``show`` positions drawn for each finding."""
    start = Board(report.board.rows, report.board.cols, report.board.k)
    label = players.label(report.name)
    side_words = " and ".join(side.side for side in report.sides)
    if report.sides and report.sides[0].exhaustive:
        how = "exhaustive: every move it may pick against every reply"
    else:
        how = f"sampled games against {report.opponent}"
    lines = [f"audit of {report.name} ({label}) on {board_name(report.board)} as {side_words}, {how}"]
    for side in report.sides:
        other = "O" if side.side == "X" else "X"
        lines.append("")
        if side.exhaustive:
            lines.append(f"as {side.side}: {_count(side.positions, 'position')} where it moves, "
                         f"{_count(side.moves, 'move')} it may pick")
        else:
            lines.append(f"as {side.side}: {_count(side.games, 'game')} ({side.wins:,} won, {side.draws:,} drawn, "
                         f"{side.losses:,} lost); {side.moves:,} distinct moves in {side.positions:,} positions")
        if not side.can_lose:
            if side.exhaustive:
                lines.append("  never loses")
            else:
                lines.append(f"  no loss in {_count(side.games, 'game')}: with {report.confidence:.0%} confidence "
                             f"its loss rate against {report.opponent} is below {_percent(side.loss_bound)}")
        elif side.forced is not None and side.forced_plies is not None:
            lines.append(f"  loses to a forced line: {other} wins within {_count(side.forced_plies, 'ply', 'plies')} "
                         f"whatever it picks ({plural(len(side.forced_games), 'game')}, "
                         f"{plural(len(side.forced), 'position')} where {other} must know the move):")
            lines += [f"    {_line(start, game)}" for game in side.forced_games[:max(show, 1) * 4]]
            if len(side.forced_games) > max(show, 1) * 4:
                lines.append(f"    … and {len(side.forced_games) - max(show, 1) * 4} more")
            if show and side.forced_games:
                game = side.forced_games[0]
                lines.append(f"  the end of {_line(start, game)}:")
                lines += ["    " + row for row in _diagram(_end(start, game), game[-1]).splitlines()]
        else:
            if side.exhaustive:
                lines.append(f"  can lose, but not by force (its random choices can escape every strategy of {other})")
            else:
                lines.append(f"  lost {side.losses:,} of {side.games:,} games: with {report.confidence:.0%} "
                             f"confidence its loss rate against {report.opponent} is below {_percent(side.loss_bound)}")
        if side.shortest_loss is not None and side.forced is None:
            game = side.shortest_loss
            lines.append(f"  {'the' if side.exhaustive else 'a sampled'} shortest loss: {_line(start, game)}")
            if show:
                lines += ["    " + row for row in _diagram(_end(start, game), game[-1]).splitlines()]
        for what, found in (("win", side.throws_win), ("draw", side.throws_draw)):
            lines.append(f"  moves that throw away a {what}: {len(found):,} of {side.moves:,}"
                         + (f" (in {plural(len({b.position.key for b in found}), 'position')})" if found else ""))
            for blunder in found[:show]:
                after = blunder.position.play(blunder.cell)
                lines.append(f"    {blunder.describe()}")
                lines += ["      " + row for row in _diagram(after, blunder.cell).splitlines()]
        if side.unchecked:
            lines.append(f"  {side.unchecked:,} moves not judged: the solver cannot settle them quickly on this board")
    lines.append("")
    status = "" if report.complete else " (stopped early: the figures cover the games finished)"
    lines.append(f"audit took {report.seconds:.2f} s{status}")
    return "\n".join(lines)


def _count(n: int, word: str, words: str | None = None) -> str:
    """``1 position``, ``2,345 positions``."""
    return f"{n:,} {word if n == 1 else words or word + 's'}"


def _percent(rate: float | None) -> str:
    if rate is None:
        return "n/a"
    return f"{100 * rate:.2g}%" if rate < 0.01 else f"{100 * rate:.1f}%"


def report_json(report: AuditReport) -> dict[str, object]:
    """The audit as plain data (cells as names, positions as text)."""
    start = Board(report.board.rows, report.board.cols, report.board.k)

    def blunders(found: list[Blunder]) -> list[dict[str, object]]:
        return [{"position": str(b.position), "move": start.cell_name(b.cell), "before": b.before, "after": b.after,
                 "best": [start.cell_name(c) for c in b.best]} for b in found]

    sides = []
    for side in report.sides:
        entry: dict[str, object] = {
            "side": side.side, "exhaustive": side.exhaustive, "positions": side.positions, "moves": side.moves,
            "can_lose": side.can_lose,
            "shortest_loss": None if side.shortest_loss is None else _line(start, side.shortest_loss),
            "forced_plies": side.forced_plies,
            "forced_strategy": None if side.forced is None else
            {position: start.cell_name(cell) for position, cell in side.forced.items()},
            "forced_games": [_line(start, game) for game in side.forced_games],
            "throws_win": blunders(side.throws_win), "throws_draw": blunders(side.throws_draw),
        }
        if not side.exhaustive:
            entry.update(games=side.games, wins=side.wins, draws=side.draws, losses=side.losses,
                         loss_rate_bound=side.loss_bound, unchecked=side.unchecked)
        sides.append(entry)
    return {"player": report.name, "board": board_name(report.board), "opponent": report.opponent,
            "confidence": report.confidence, "never_loses": report.never_loses, "complete": report.complete,
            "seconds": round(report.seconds, 3), "sides": sides}


def write_pictures(report: AuditReport, directory: str, show: int = 3) -> list[str]:
    """Draw the audit's positions into ``directory`` as SVG (:mod:`noughts.svg`): each forced or
    shortest loss, and up to ``show`` of each kind of blunder, the move highlighted. Returns the paths."""
    import os

    from noughts import svg

    os.makedirs(directory, exist_ok=True)
    start = Board(report.board.rows, report.board.cols, report.board.k)
    written: list[str] = []

    def save(stem: str, board: Board, last: int, title: str) -> None:
        path = os.path.join(directory, f"{report.name}-{stem}.svg")
        with open(path, "w", encoding="utf-8") as file:
            file.write(svg.board(board, last_move=last, title=title))
        written.append(path)

    for side in report.sides:
        tag = side.side.lower()
        games = side.forced_games[:show] if side.forced is not None else \
            ([side.shortest_loss] if side.shortest_loss is not None else [])
        for i, game in enumerate(games, 1):
            save(f"as-{tag}-loss-{i}", _end(start, game), game[-1], f"{report.name} as {side.side} loses: "
                 + _line(start, game))
        for what, found in (("win", side.throws_win), ("draw", side.throws_draw)):
            for i, blunder in enumerate(found[:show], 1):
                save(f"as-{tag}-throws-{what}-{i}", blunder.position.play(blunder.cell), blunder.cell,
                     f"{report.name} as {side.side}: {blunder.describe()}")
    return written


# the table in docs/audit.md -------------------------------------------------------------------

TABLE_BEGIN = "<!-- audit table: generated by `python scripts/audit_docs.py`; do not edit by hand -->"
TABLE_END = "<!-- end of the audit table -->"


def markdown_table(reports: list[AuditReport]) -> str:
    """Exhaustive 3×3 audits as a Markdown table (one row per player and side) and each forced line."""
    start = Board()
    lines = [
        "| player | as | positions | moves | loses? | shortest loss | forced win against it "
        "| throws away a win | throws away a draw |",
        "|---|---|---:|---:|---|---|---|---:|---:|",
    ]
    forced_lines = []
    for report in reports:
        for side in report.sides:
            other = "O" if side.side == "X" else "X"
            if not side.can_lose:
                loses, forced = "never", "—"
            elif side.forced is not None:
                loses = "by force"
                forced = f"{other} in {side.forced_plies} plies ({len(side.forced_games)} "
                forced += f"{'line' if len(side.forced_games) == 1 else 'lines'})"
                forced_lines.append(f"* `{report.name}` as {side.side}: "
                                    + "; ".join(f"`{_line(start, game)}`" for game in side.forced_games))
            else:
                loses, forced = "can", "none: its random choices can escape"
            shortest = "—" if side.shortest_loss is None else f"`{_line(start, side.shortest_loss)}`"
            lines.append(f"| `{report.name}` | {side.side} | {side.positions:,} | {side.moves:,} | {loses} | "
                         f"{shortest} | {forced} | {len(side.throws_win):,} | {len(side.throws_draw):,} |")
    text = "\n".join(lines)
    if forced_lines:
        text += ("\n\nThe forced lines (the opponent's moves follow one strategy; "
                 "the audited player's choices branch):\n\n")
        text += "\n".join(forced_lines)
    return text + "\n"


def builtin_names() -> list[str]:
    """The built-in players (not plug-ins: their classes live in the modules of noughts.players), in menu order."""
    return [name for name in players.names()
            if type(players.get(name, random.Random(0))).__module__.startswith("noughts.players.")]


def builtin_reports() -> list[AuditReport]:
    """The exhaustive 3×3 audit of every built-in player, in menu order."""
    return [audit(name) for name in builtin_names()]
