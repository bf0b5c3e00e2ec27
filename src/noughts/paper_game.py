"""Paper mode: a game on real paper against the computer, a person holding the pen for both sides.

A camera (a phone's, through the web page; a webcam, through ``noughts paper``) watches the sheet and
the robot's reader (:mod:`noughts.sheet.camera`) reads each frame into a
:class:`~noughts.sheet.reading.SheetReading`. :class:`PaperGame` turns that stream of readings into
the game: the person's move is the one new mark of their shape seen, surely, in ``steady``
frames running; the computer's move is announced, and the game waits until that mark is seen
drawn in that square. Anything else (the sheet out of view, a mark in doubt, a wrong square, two
new marks) is a question to the person, never a guess. The :class:`~noughts.match.Match` keeps
the rules, the result, the tally and the record, as in every front end.

Nothing here reads pictures: readings come in, a :class:`PaperView` goes out (what to show and
what to say), so the terminal and the web share every rule.

>>> from noughts.match import Match
>>> from noughts.sheet.reading import cell_readings
>>> paper = PaperGame(Match("easy", first="me", seed=1), steady=1)
>>> paper.see(SheetReading(cell_readings("........."))).say
'Your move: draw an X in an empty square.'
>>> paper.see(SheetReading(cell_readings("....X...."))).phase
'think'
>>> cell = paper.think()
>>> paper.see(SheetReading(cell_readings("....X...."))).phase
'draw'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from noughts import text
from noughts.match import Match
from noughts.sheet.reading import SURE, SheetReading, changes

__all__ = ["STEADY", "SURE", "PaperGame", "PaperView"]

STEADY = 2  # frames running in which a new mark must be seen before it counts (a hand or a pen passing)


@dataclass(frozen=True)
class PaperView:
    """What one frame told: the ``phase`` ("move": the person's move is awaited; "think": the
    computer is working out its move; "draw": the computer's move, ``owed``, is to be drawn; "over":
    the game is over), ``say`` (what the person should read now) and ``announce`` (a sentence to
    say aloud, only when it is new), and the reading it came from (for drawing over the picture)."""

    phase: str
    say: str
    announce: str | None
    owed: int | None
    reading: SheetReading
    moved: int | None = None  # the cell played on this frame (the person's move), if any


class PaperGame:
    """The game of ``match`` played on paper: feed it every reading (:meth:`see`).

    The match's first seat is the person, its second a computer player. When the computer is to
    move after a reading, :meth:`see` says so (phase "think"); the front end works the move out
    (``match.computer_job()`` where it likes, or :meth:`think` here) and then calls
    :meth:`computer_moved`. A finished game is followed by the next one once an empty sheet is seen.
    """

    def __init__(self, match: Match, *, steady: int = STEADY, sure: float = SURE) -> None:
        if match.two_people:
            raise ValueError("paper mode plays against a computer player")
        self.match = match
        self.steady = max(1, steady)
        self.sure = sure
        self.owed: int | None = None  # the computer's move, not yet seen drawn
        self._candidate: tuple[int, ...] = ()  # what the last frames showed, and how many in a row
        self._seen_for = 0
        self._said: str | None = None
        self._doubt: str | None = None  # the question the last frames raised, and for how many frames running
        self._doubted_for = 0
        if match.game is None or match.game_over:
            match.new_game()

    # kept between processes (a web room in Redis) ------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """What the game on paper knows beyond its match: the computer's move not yet drawn, what the
        last frames showed and what was last said."""
        return {"owed": self.owed, "steady": self.steady, "candidate": list(self._candidate),
                "seen_for": self._seen_for, "said": self._said, "doubt": self._doubt, "doubted_for": self._doubted_for}

    @classmethod
    def from_dict(cls, match: Match, data: Mapping[str, Any]) -> PaperGame:
        """The game on paper :meth:`to_dict` kept, for ``match`` as it was kept (a finished game stays
        finished, waiting for an empty sheet: no new game is begun here)."""
        paper = cls.__new__(cls)
        paper.match, paper.steady, paper.sure = match, max(1, int(data["steady"])), SURE
        paper.owed = None if data["owed"] is None else int(data["owed"])
        paper._candidate = tuple(int(cell) for cell in data["candidate"])
        paper._seen_for = int(data["seen_for"])
        paper._said = None if data["said"] is None else str(data["said"])
        paper._doubt = None if data.get("doubt") is None else str(data["doubt"])
        paper._doubted_for = int(data.get("doubted_for", 0))
        return paper

    # what the person has to do -----------------------------------------------------------------
    @property
    def person_mark(self) -> str:
        return self.match.mark_of(0)

    @property
    def computer_mark(self) -> str:
        return self.match.mark_of(1)

    def on_paper(self) -> list[str | None]:
        """Every cell's mark as it should be on the sheet: the match's, less the computer's move not yet drawn."""
        marks = list(self.match.board.cells)
        if self.owed is not None:
            marks[self.owed] = None
        return marks

    def phase(self) -> str:
        if self.owed is not None:
            return "draw"
        if self.match.game_over:
            return "over"
        return "think" if self.match.computer_to_move else "move"

    def instruction(self) -> str:
        board = self.match.board
        phase = self.phase()
        if phase == "draw":
            assert self.owed is not None
            return text.paper_draw_mine(self.match.name_of(1), self.computer_mark, board.cell_name(self.owed))
        if phase == "over":
            return f"{self.match.result_sentence()} {text.PAPER_NEXT_GAME}"
        if phase == "think":
            return text.thinking(self.match.name_of(1))
        return text.paper_your_move(self.person_mark)

    # the frames --------------------------------------------------------------------------------
    def see(self, reading: SheetReading) -> PaperView:
        """Take one reading of the sheet; returns what to show and say."""
        phase = self.phase()
        if phase == "think":
            return self._view(reading, self.instruction())
        question = self._question(reading)
        if question is not None:
            self._steady(())
            return self._ask(reading, question)
        new = changes(reading, self.on_paper(), self.sure).new
        if phase == "over":
            if all(not cell.mark and cell.confidence >= self.sure for cell in reading.cells) and self._steady((-1,)):
                self.match.new_game()
                self._said = None
                return self._view(reading, self.instruction())
            return self._view(reading, self.instruction())
        if not new:
            self._steady(())
            return self._view(reading, self.instruction())
        cells = tuple(cell for cell, _ in new)
        if phase == "draw" and self._drawn_on(new):
            # The camera missed the computer's mark (a hand, a dark frame) while the person went on
            # to their own move: ink cannot be taken back, and both marks are where they belong.
            if not self._steady(cells):
                return self._view(reading, self.instruction())
            (cell, _), = [(cell, mark) for cell, mark in new if cell != self.owed]
            self.owed = None
            self.match.play(cell, seat=0)
            return self._view(reading, self.instruction(), moved=cell)
        if len(new) > 1:
            self._steady(())
            return self._ask(reading, text.paper_too_many(text.cells_named(self.match.board, cells)))
        cell, mark = new[0]
        board = self.match.board
        if phase == "draw":
            if cell != self.owed:
                self._steady(())
                assert self.owed is not None
                return self._ask(reading, text.paper_wrong_square(board.cell_name(cell), board.cell_name(self.owed),
                                                                  self.computer_mark))
            if mark not in (self.computer_mark, "?"):
                self._steady(())
                return self._ask(reading, text.paper_wrong_shape(board.cell_name(cell), mark, self.computer_mark))
            if not self._steady(cells):
                return self._view(reading, self.instruction())
            self.owed = None
            return self._view(reading, self.instruction())
        if mark not in (self.person_mark, "?"):
            self._steady(())
            return self._ask(reading, text.paper_wrong_shape(board.cell_name(cell), mark, self.person_mark))
        if not self._steady(cells):
            return self._view(reading, self.instruction())
        self.match.play(cell, seat=0)
        return self._view(reading, self.instruction(), moved=cell)

    def computer_moved(self, cell: int) -> None:
        """The computer has played ``cell`` in the match: the person is to draw it (the next frame says so)."""
        self.owed = cell
        self._steady(())

    def think(self) -> int | None:
        """Work out and play the computer's move here (the terminal's way); None if it is not its turn."""
        if not self.match.computer_to_move:
            return None
        cell = self.match.apply_now()
        self.computer_moved(cell)
        return cell

    # helpers -----------------------------------------------------------------------------------
    def _ask(self, reading: SheetReading, question: str) -> PaperView:
        """A question, said once it has stood ``steady`` frames running: a pen or a hand passing
        (half a mark, the sheet covered for a moment) is not worth a word, nor a flicker of words."""
        if question != self._doubt:
            self._doubt, self._doubted_for = question, 0
        self._doubted_for += 1
        if self._doubted_for < self.steady:
            return self._view(reading, self._said or self.instruction(), doubt=True)
        return self._view(reading, question, doubt=True)

    def _view(self, reading: SheetReading, say: str, *, moved: int | None = None, doubt: bool = False) -> PaperView:
        if not doubt:
            self._doubt, self._doubted_for = None, 0
        announce = None if say == self._said else say
        self._said = say
        return PaperView(self.phase(), say, announce, self.owed, reading, moved)

    def _steady(self, candidate: tuple[int, ...]) -> bool:
        """Note what this frame showed; True once the same was seen ``steady`` frames running."""
        if candidate != self._candidate:
            self._candidate, self._seen_for = candidate, 0
        self._seen_for += 1
        return bool(candidate) and self._seen_for >= self.steady

    def _question(self, reading: SheetReading) -> str | None:
        """Why this frame cannot be judged (the sheet not seen, a mark in doubt, a taken square
        drawn over), or None."""
        board = self.match.board
        if not reading.found:
            return text.paper_no_sheet(reading.message)
        cells = reading.cells
        if len(cells) != board.size:
            return text.paper_wrong_sheet(board.rows, board.cols)
        found = changes(reading, self.on_paper(), self.sure)
        if found.doubtful:
            return text.paper_unsure(text.cells_named(board, found.doubtful))
        if found.overdrawn:
            return text.paper_overdrawn(text.cells_named(board, found.overdrawn))
        return None

    def _drawn_on(self, new: list[tuple[int, str]]) -> bool:
        """Whether ``new`` is the computer's mark in its square and then exactly one move of the
        person's (of their shape; the game not over with the computer's move)."""
        if len(new) != 2 or self.match.game_over or not any(cell == self.owed for cell, _ in new):
            return False
        owed_mark = next(mark for cell, mark in new if cell == self.owed)
        other_mark = next(mark for cell, mark in new if cell != self.owed)
        return owed_mark in (self.computer_mark, "?") and other_mark == self.person_mark

