"""Every sentence a person reads about a game, in one place, and the names people see.

Front ends (terminal, window, web page, panel) take their wording from here, so a result is
announced the same way everywhere.
"""

from __future__ import annotations

import os

from noughts.errors import NoughtsError

TYPE_CHECKING = False  # typing costs milliseconds at import; mypy still reads the block
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from noughts.board import Board  # the board imports this module for its sentences

MAX_NAME = 40  # a name is shown in tables and prompts


def describe_line(board: Board, line: Sequence[int], dash: str = "–") -> str:
    """Name a line of cells: 'the top row a1–c1', 'the left column a1–a3', 'the diagonal a1–c3'.

    >>> from noughts.board import Board
    >>> board = Board()
    >>> describe_line(board, (0, 1, 2)), describe_line(board, (2, 4, 6), "-")
    ('the top row a1–c1', 'the diagonal c1-a3')
    >>> describe_line(Board(4, 4), (1, 5, 9, 13))
    'column b b1–b4'
    """
    rows, cols = board.rows, board.cols
    (r0, c0), (r1, c1) = divmod(line[0], cols), divmod(line[-1], cols)
    if r0 == r1:
        name = ("the top row" if r0 == 0 else "the bottom row" if r0 == rows - 1
                else "the middle row" if rows == 3 else f"row {r0 + 1}")
    elif c0 == c1:
        name = ("the left column" if c0 == 0 else "the right column" if c0 == cols - 1
                else "the middle column" if cols == 3 else f"column {chr(ord('a') + c0)}")
    else:
        name = "the diagonal"
    return f"{name} {board.cell_name(line[0])}{dash}{board.cell_name(line[-1])}"


def shown(text: str, limit: int = 20) -> str:
    """Echo what someone typed safely: quoted, control characters escaped, cut short."""
    return repr(text) if len(text) <= limit else repr(text[:limit]) + "…"


def plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n} {word if n == 1 else plural or word + 's'}"


def check_name(text: str, what: str) -> str:
    name = " ".join(text.split())
    if not name:
        raise NoughtsError(f"{what} cannot be empty")
    if len(name) > MAX_NAME:
        raise NoughtsError(f"{what} is at most {MAX_NAME} characters long, not {len(name)}")
    if not name.isprintable():
        raise NoughtsError(f"{what} can only hold printable characters, not {shown(name)}")
    return name


def default_name(environ: Mapping[str, str] | None = None, fallback: str = "You") -> str:
    """The person's name when none is given: the login name, else ``fallback``."""
    env = os.environ if environ is None else environ
    for variable in ("USER", "USERNAME", "LOGNAME"):
        try:
            return check_name(env.get(variable, ""), "a name")
        except NoughtsError:
            continue
    return fallback


# the marks ------------------------------------------------------------------------------------

# One pair of colours for X and O in every front end: blue and orange stay apart for the common
# kinds of colour blindness, and every front end also shows the letter or the shape, so nothing
# depends on telling the colours apart.
MARK_COLOURS = {"X": "#1f5fbf", "O": "#d9640f"}
MARK_ANSI = {"X": "\x1b[1;38;5;25m", "O": "\x1b[1;38;5;166m"}  # the same blue and orange, bold (256 colours)
MARK_COLOUR_NAMES = {"X": "blue", "O": "orange"}  # the colours above, in words (legends)


_RESET = "\x1b[0m"
_STYLE: dict[str | None, str] = {"X": MARK_ANSI["X"], "O": MARK_ANSI["O"], None: "\x1b[2m"}
_WIN = "\x1b[1;7m"


def colour_wanted(environ: Mapping[str, str] | None = None) -> bool:
    """False when the person asked for no colour (https://no-color.org) or the terminal is dumb."""
    env = os.environ if environ is None else environ
    return not env.get("NO_COLOR") and env.get("TERM") != "dumb"


# choices: who starts and who plays ------------------------------------------------------------

# Who plays X (and so moves first) in each game, in the match's words (noughts.match.FIRST_RULES):
# the label a menu shows and what it means, said to the person in seat 0. Every front end shows these.
_FIRST_WORDING: dict[str, tuple[str, str]] = {
    "me": ("{you} first", "{you_are} X and {move} first in every game"),
    "computer": ("{other} first", "{other_is} X and moves first in every game"),
    "alternate": ("Take turns", "{you} {move} first in the first game, then the first move alternates"),
    "loser": ("Loser starts", "the loser of each game moves first in the next (after a draw, the other side)"),
    "random": ("Toss a coin", "a coin toss before each game decides who moves first"),
}
FIRST_HEADING = "Who moves first"
"""The heading over the choice of who starts, in every front end."""
OPPONENT_HEADING = "Play against"
"""The heading over the choice of opponent, in every front end."""
PERSON_LABEL = "Another person"
"""The opponent that is a second person at the same screen, panel or sheet."""


def first_choices(you: str = "You", other: str = "Opponent") -> list[tuple[str, str, str]]:
    """(rule, label, description) for each rule of who starts, in menu order.

    ``you`` and ``other`` name the two seats: the defaults for a game against the computer,
    two names for two people.

    >>> [label for _, label, _ in first_choices()]
    ['You first', 'Opponent first', 'Take turns', 'Loser starts', 'Toss a coin']
    >>> first_choices("Ann", "Bob")[0]
    ('me', 'Ann first', 'Ann is X and moves first in every game')
    >>> first_choices()[2][2]
    'you move first in the first game, then the first move alternates'
    """
    plain = you == "You"
    words = {
        "you": you, "other": other,
        "you_are": "you are" if plain else f"{you} is",
        "move": "move" if plain else "moves",
        "other_is": "your opponent is" if other == "Opponent" else f"{other} is",
    }
    choices = []
    for rule, (label, about) in _FIRST_WORDING.items():
        about = about.format(**words)
        if plain and about.startswith("You "):
            about = "you " + about[4:]
        choices.append((rule, label.format(**words), about))
    return choices


def first_label(rule: str) -> str:
    """The menu label of one rule of who starts, said to the person in seat 0."""
    return next(label for name, label, _ in first_choices() if name == rule)


def opponent_label(name: str) -> str:
    """What a menu calls an opponent: a computer player's label, or :data:`PERSON_LABEL`."""
    from noughts import players  # players import nothing of this module's; imported when a menu is drawn

    return PERSON_LABEL if name == "person" else players.label(name)


# scores -----------------------------------------------------------------------------------------

SCORING_RULE = ("A win scores 1 on easy, 2 on medium and 3 on hard (the EV3 robot's rules); a loss or a draw "
                "ends the run. Every board keeps its own.")
"""The scoring rule in a sentence (noughts.store.DIFFICULTY_POINTS holds the numbers), in every front end."""
CURRENT_RUN = "Current run"


def saved_game(game_id: int, board: str | None, difficulty: str | None, points: int, run: int, high_score: int | None,
               *, new_high_score: bool = False) -> str:
    """A finished game kept in the scores, and how the robot's scores moved, in every front end.

    >>> saved_game(7, "4×4, 4 in a row", "hard", 3, 3, 3, new_high_score=True)
    'Saved as game 7 (4×4, 4 in a row). +3 points: your run is 3; hard high score 3 (a new high score!).'
    >>> saved_game(8, None, "easy", 0, 0, 1), saved_game(9, None, None, 0, 0, 0)
    ('Saved as game 8. Your run is back to 0; easy high score 1.', 'Saved as game 9.')
    """
    line = f"Saved as game {game_id}{f' ({board})' if board else ''}."
    if difficulty is None:
        return line
    line += f" +{plural(points, 'point')}: your run is {run}" if points else " Your run is back to 0"
    return line + f"; {difficulty} high score {high_score}" + (" (a new high score!)." if new_high_score else ".")


# What a web server's players are told about a finished game it could not keep (noughts.web.recording):
# never where the store is or what it said (that goes to the server's log).
GAME_NOT_SAVED = "This game could not be saved."
GAME_SAVED_LATER = "The score database cannot be reached just now: this game will be saved when it is back."
SCORES_OFF_FOR_SERVER = "Scores and history are off for this server."
SCORES_NOT_STARTED = "The score store has not been started."
SERVER_STOPPING_NOT_SAVED = "The server is stopping, so this game was not saved."
STORE_NOT_KEEPING_UP = "The score database is not keeping up, so this game was not saved."


# moves refused and games not counted ----------------------------------------------------------

def cell_taken(cell_name: str, mark: str) -> str:
    """A move onto a taken square, in every front end.

    >>> cell_taken("b2", "X")
    'b2 is taken by X: choose an empty square.'
    """
    return f"{cell_name} is taken by {mark}: choose an empty square."


def not_your_turn(to_move: str) -> str:
    return f"It is not your turn: {to_move} is to move."


def wait_for(name: str) -> str:
    """A move tried while the computer (``name``) works out its own."""
    return f"Wait: it is {name}'s turn."


GAME_OVER = "This game is over: start another one."
NOTHING_TO_UNDO = "There is no move of yours to take back."
NOTHING_TO_UNDO_TWO = "There is no move to take back yet."
NOT_YOURS_TO_UNDO = "Only your own last move can be taken back, before the reply to it."
HINT_AT_YOUR_MOVE = "A hint comes at your move."
NO_GAME = "No game has started yet."
THINKING = "thinking…"
NEW_GAME_ABANDONS = "The unfinished game does not count: a new game begins."


def thinking(name: str) -> str:
    """The computer ``name`` has worked on its move for match.THINKING_AFTER seconds: said in every front end.

    >>> thinking("Hard")
    'Hard is thinking…'
    """
    return f"{name} is {THINKING}"


def not_counted(why: str) -> str:
    """A game given up before its end: ``why`` happened, so the game does not count.

    >>> not_counted("You stopped")
    'You stopped: the unfinished game does not count.'
    """
    return f"{why}: the unfinished game does not count."


# results --------------------------------------------------------------------------------------

def cells_named(board: Board, cells: Sequence[int]) -> str:
    """Squares named as a person lists them.

    >>> from noughts.board import Board
    >>> cells_named(Board(), [0]), cells_named(Board(), [0, 4, 8])
    ('a1', 'a1, b2 and c3')
    """
    named = [board.cell_name(cell) for cell in cells]
    return named[0] if len(named) == 1 else ", ".join(named[:-1]) + " and " + named[-1]


def other_mark(mark: str) -> str:
    return "O" if mark == "X" else "X"


def result_banner(winner: str | None, winner_name: str, *, you: bool | None = None) -> str:
    """A result in two or three words: 'You win', 'You lose', 'Ann wins', "It's a draw".

    ``you`` is True when the person looking at it won, False when they lost, None when the
    people at the screen are both players (or only watching).

    >>> result_banner("X", "Ann"), result_banner("O", "You", you=True), result_banner(None, "")
    ('Ann wins', 'You win', "It's a draw")
    """
    if winner is None:
        return "It's a draw"
    if you is None:
        return "You win" if winner_name == "You" else f"{winner_name} wins"
    return "You win" if you else "You lose"


def result_sentence(board: Board, winner_name: str, *, you: bool | None = None, dash: str = "–") -> str:
    """The end of a game in one sentence, with the winning line named.

    >>> from noughts.board import Board
    >>> result_sentence(Board.parse("XXX/OO./..."), "Ann")
    'Ann (X) wins along the top row a1–c1.'
    >>> result_sentence(Board.parse("XXX/OO./..."), "Ann", you=True, dash="-")
    'You win along the top row a1-c1!'
    >>> result_sentence(Board.parse("XOX/XOO/OXX"), "")
    "It's a draw: the board is full and nobody has a line."
    >>> result_sentence(Board.parse("XXX/OO./..."), "You")  # a replay: the person who was X
    'You (X) win along the top row a1–c1.'
    """
    winner, line = board.winner, board.winning_line
    if winner is None or line is None:
        return "It's a draw: the board is full and nobody has a line."
    along = describe_line(board, line, dash)
    if you is True:
        return f"You win along {along}!"
    if you is False:
        return f"{winner_name} ({winner}) wins along {along}. You lose."
    return f"{winner_name} ({winner}) {'win' if winner_name == 'You' else 'wins'} along {along}."


def tally_line(first: str, second: str, tally: Sequence[int]) -> str:
    """Games won by each side and drawn: 'Ann: 2 · Bob: 1 · draws: 0'.

    >>> tally_line("You", "Medium", [1, 0, 2])
    'You: 1 · Medium: 0 · draws: 2'
    """
    return f"{first}: {tally[0]} · {second}: {tally[1]} · draws: {tally[2]}"


def match_sentence(first: str, second: str, score: Sequence[int], best_of: int, *, dash: str = "–") -> str:
    """The end of a best-of match.

    >>> match_sentence("Ann", "Bob", [2, 1, 0], 3)
    'Ann wins the match 2–1 (best of 3).'
    >>> match_sentence("You", "Medium", [1, 1, 1], 3)
    'The match is drawn 1–1 (best of 3).'
    """
    a, b = score[0], score[1]
    if a == b:
        return f"The match is drawn {a}{dash}{b} (best of {best_of})."
    winner, high, low = (first, a, b) if a > b else (second, b, a)
    verb = "win" if winner == "You" else "wins"
    return f"{winner} {verb} the match {high}{dash}{low} (best of {best_of})."


# the board as text -------------------------------------------------------------------------

DIAGRAM_WIDTH = 80
"""Columns a board diagram may take: a terminal's width."""


def board_diagram(board: Board, *, last: int | None = None, line: Iterable[int] | None = None,
                  colour: bool = False, width: int = DIAGRAM_WIDTH) -> str:
    """The board with column letters and row numbers; an empty cell shows the number to type.

    >>> from noughts.board import Board
    >>> print(board_diagram(Board.parse("X../.O./...")))
         a   b   c
     1   X | 2 | 3
        ---+---+---
     2   4 | O | 6
        ---+---+---
     3   7 | 8 | 9
    >>> print(board_diagram(Board.parse("XXX/OO./..."), last=2, line=(0, 1, 2)))
         a   b   c
     1  *X*|*X*|*X*
        ---+---+---
     2   O | O | 6
        ---+---+---
     3   7 | 8 | 9

    ``last`` is shown in brackets and the cells of ``line`` between stars (and, with
    ``colour``, in reverse video), so both show without colour too. A board too wide for
    ``width`` columns that way is drawn compactly: three columns a cell, ``.`` for an empty
    one, no rules between rows (a 26×26 board fits 80 columns):

    >>> print(board_diagram(Board(13, 13, 5).play(0), last=0).splitlines()[1])
     1 [X] .  .  .  .  .  .  .  .  .  .  .  .
    """
    if _numbered_width(board) > width:
        return _compact_diagram(board, last, set(line or ()), colour, width)
    digits = len(str(board.size))
    rule = "+".join("-" * (digits + 2) for _ in range(board.cols))
    margin = len(str(board.rows)) + 2
    # letters, numbers and marks all line up on the cell's last character
    header = " " * (margin + 1) + "".join(f" {chr(ord('a') + c):>{digits}}  " for c in range(board.cols))
    winning = set(line or ())
    lines = [header.rstrip()]
    for r in range(board.rows):
        cells = []
        for c in range(board.cols):
            cell = r * board.cols + c
            mark = board[cell]
            text = mark or str(cell + 1)
            if colour:
                text = f"{_WIN if cell in winning else ''}{_STYLE[mark]}{text}{_RESET}"
            left, right = ("*", "*") if cell in winning else ("[", "]") if cell == last else (" ", " ")
            pad = " " * (digits - (len(mark) if mark else len(str(cell + 1))))
            cells.append(f"{pad}{left}{text}{right}")
        if r:
            lines.append(" " * (margin + 1) + rule)
        lines.append(f" {r + 1:<{margin}}" + "|".join(cells).rstrip())
    return "\n".join(lines)


def diagram_numbers_cells(board: Board, width: int = DIAGRAM_WIDTH) -> bool:
    """Whether :func:`board_diagram` shows each empty cell's number (else the board is too wide for them)."""
    return _numbered_width(board) <= width


def _numbered_width(board: Board) -> int:
    """Columns the widest line of the numbered diagram takes."""
    return 1 + len(str(board.rows)) + 2 + board.cols * (len(str(board.size)) + 3) - 1


def _compact_diagram(board: Board, last: int | None, winning: set[int], colour: bool, width: int) -> str:
    digits = len(str(board.rows))
    gap = " " if digits + 1 + 3 * board.cols <= width else ""  # between the row numbers and the board, if it fits
    header = " " * (digits + len(gap)) + "".join(f" {chr(ord('a') + c)} " for c in range(board.cols))
    lines = [header.rstrip()]
    for r in range(board.rows):
        cells = []
        for c in range(board.cols):
            cell = r * board.cols + c
            mark = board[cell]
            text = mark or "."
            if colour:
                text = f"{_WIN if cell in winning else ''}{_STYLE[mark]}{text}{_RESET}"
            left, right = ("*", "*") if cell in winning else ("[", "]") if cell == last else (" ", " ")
            cells.append(f"{left}{text}{right}")
        lines.append(f"{r + 1:>{digits}}{gap}" + "".join(cells).rstrip())
    return "\n".join(lines)


# the terminal's own sentences ----------------------------------------------------------------

TERMINAL_TITLE = "noughts: noughts and crosses (tic-tac-toe)."
TERMINAL_ENTER_TAKES_DEFAULT = "Press Enter to take the choice in [brackets]."
TERMINAL_CHECKING_PLAYERS = "Checking which computer players can play this board…"
TERMINAL_WORKING_OUT_HINT = "Working out a hint…"
TERMINAL_PERSON_ABOUT = "at this keyboard: you take turns"
TERMINAL_NOT_ON_BOARD = "not on this board"
TERMINAL_WHO_FIRST = f"{FIRST_HEADING}? X always moves first, O second."
TERMINAL_GOODBYE = "Goodbye."
TERMINAL_YOU_STOPPED = "You stopped"
TERMINAL_INTERRUPTED = "Interrupted"
TERMINAL_AGAIN_HELP = "Please answer y (or just press Enter) to play, n to stop, or m for the menu."
TERMINAL_LINE_TOO_LONG = "That line is far too long."


TERMINAL_FIRST_NAME = "First player's name"
TERMINAL_SECOND_NAME = "Second player's name"
TERMINAL_DIFFERENT_NAMES = "The two people need different names."
TERMINAL_NAME_TOO_LONG = f"That line is far too long for a name (at most {MAX_NAME} characters)."


def terminal_question(question: str, default: str) -> str:
    """A prompt with the answer Enter gives: 'Opponent [Medium]: '."""
    return f"{question} [{default}]: "


def terminal_another_name(why: str) -> str:
    return f"Please type another name: {why}."


def terminal_who_to_play(board: Board) -> str:
    if (board.rows, board.cols, board.k) == (3, 3, 3):
        return f"{OPPONENT_HEADING}:"
    return f"{OPPONENT_HEADING}, on this {board.rows}×{board.cols} board ({board.k} in a row):"


def terminal_not_on_list(typed: str, count: int, default: str, names: bool = True) -> str:
    """An answer to a numbered menu that is none of its choices."""
    what = f"a number from 1 to {count}" + (" or a name" if names else "")
    return f"{shown(typed)} is not on the list: type {what}, or press Enter for {default}."


def terminal_cannot_play(label: str, reason: str) -> str:
    return f"{label} cannot play this board: {reason}. Choose another."


def terminal_instructions(board: Board, diagram: str, numbered: bool) -> str:
    """The help the game starts with and shows again for 'help'; ``diagram`` is the empty board."""
    last_col = chr(ord("a") + board.cols - 1)
    how = (f"Type a cell as a number 1-{board.size} or as column and row, a1-{last_col}{board.rows}:" if numbered
           else f"Type a cell as column and row, a1-{last_col}{board.rows} (an empty cell shows as .):")
    return "\n".join([
        f"Take turns to put your mark in a free cell; {board.k} in a row (across, down or",
        "diagonally) wins. X always moves first.",
        how,
        "",
        diagram,
        "",
        "The last move is shown [in brackets], a winning line *between stars*.",
        "At your move you can also type: undo (take back the last move; against the",
        "computer, yours and its reply), hint (the best move and where it leads),",
        "help (this text), quit (or Ctrl-D; a game left unfinished does not count).",
    ])


def terminal_game_heading(number: int, best_of: int | None, in_match: int) -> str:
    """'Game 3' or, in a best-of match, 'Game 2 of the match (best of 3)'."""
    return f"Game {number}" if best_of is None else f"Game {in_match} of the match (best of {best_of})"


def terminal_intro(opponent: str, you_are_x: bool) -> str:
    """Who plays what, said to the one person playing the computer ``opponent``."""
    return (f"you are X and move first; {opponent} is O." if you_are_x
            else f"{opponent} is X and moves first; you are O.")


def terminal_move_prompt(mark: str, name: str | None = None) -> str:
    """The prompt for a move: 'Your move (X): ', or with two people 'Ann's move (O): '."""
    return f"{name}'s move ({mark}): " if name is not None else f"Your move ({mark}): "


def terminal_type_a_cell(board: Board) -> str:
    return f"Type a cell like {min(5, board.size)} or b2 (1-{board.size}), or help, hint, undo or quit."


def terminal_computer_move(cell_name: str) -> str:
    return f"Computer move: {cell_name}"


def cannot_go_on(name: str, why: str) -> str:
    """Why a game ends uncounted when the computer ``name`` fails, in every front end; not_counted follows it."""
    return f"{name} cannot go on ({why})"


def terminal_session_tally(tally: str) -> str:
    return f"This session: {tally}."


def terminal_match_tally(best_of: int, tally: str) -> str:
    return f"Match, best of {best_of}: {tally}."


def terminal_next_game(number: int) -> str:
    """The pause between the games of a match, so the result can be read.

    >>> terminal_next_game(2)
    'Press Enter for game 2 (q to stop).'
    """
    return f"Press Enter for game {number} (q to stop)."


def terminal_play_again(match: bool) -> str:
    return f"Play {'another match' if match else 'again'}? [Y/n, m for the menu] "


def terminal_goodbye(unfinished: bool, why: str = TERMINAL_YOU_STOPPED) -> str:
    """The last line: 'Goodbye.', after saying an unfinished game does not count.

    >>> terminal_goodbye(True)
    'You stopped: the unfinished game does not count. Goodbye.'
    >>> terminal_goodbye(False, TERMINAL_INTERRUPTED)
    'Interrupted. Goodbye.'
    """
    if unfinished:
        return f"{not_counted(why)} {TERMINAL_GOODBYE}"
    return TERMINAL_GOODBYE if why == TERMINAL_YOU_STOPPED else f"{why}. {TERMINAL_GOODBYE}"


# the window's own sentences ------------------------------------------------------------------

# Labels and fixed sentences of the desktop window (noughts.desktop); {placeholders} are filled there.
WINDOW_WORDS: dict[str, str] = {
    # the start screen
    "subtitle": "noughts and crosses · tic-tac-toe",
    "play_against": OPPONENT_HEADING,
    "who_starts": FIRST_HEADING,
    "names": "Names",
    "rows": "{n} rows",
    "cols": "{n} columns",
    "k": "{n} in a row",
    "play": "Play",
    "new_game": "New game",
    "resume": "Resume",
    "two_people": "Two people at this computer take turns, with the mouse or the keys. "
                  "Click a name (or press Tab) to type it.",
    "cannot_play_board": "{about}. It cannot play this board: {why}.",
    "board_note": "Board {rows}×{cols}, {k} in a row wins. X always moves first.",
    "best_of_note": "Each match is best of {n} games.",
    "checking": "Checking which opponents can play this board…",
    "first_name": "The first person's name",
    "second_name": "The second person's name",
    "session": "This session: {tally}",
    # the game screen
    "menu": "Menu",
    "undo": "Undo",
    "hint": "Hint",
    "again": "Play again",
    "next_game": "Next game",
    "new_match": "New match",
    "header": "{you} ({mark}) vs {other} ({other_mark})",
    "match_score": "Match, best of {best_of}, game {game}: {score}",
    "game_over": "This game is over: press Play again (or N) for another, or Menu (Esc) to change the game.",
    "finish_first": "Finish this game first, or use Menu to start a different one.",
    "move_to_a_cell": "Move to a cell with the arrow keys first, or type its name.",
    "working_out_hint": "Working out a hint…",
    "no_hint": "No hint: {why}",
    "game_abandoned": "Game abandoned",
    "scores_not_kept": "Scores are not kept in this session.",
    "scores_off": "Scores are off (see the note above).",
    "high_scores": "High scores: {high} · current run {run}",
}


def window_turn(name: str, mark: str, *, you: bool, cells: int, short: bool = False) -> str:
    """Whose move it is in the window, and (unless ``short``) how to make it.

    >>> window_turn("You", "X", you=True, cells=9)
    'Your turn (X): click a cell, or press 1–9, or move with the arrows and press Enter.'
    >>> window_turn("Ann", "O", you=False, cells=225)
    'Ann (O) to move: click a cell, or type its name (like c4) and press Enter, or use the arrows.'
    >>> window_turn("You", "O", you=True, cells=9, short=True)
    'Your turn (O).'
    """
    who = f"Your turn ({mark})" if you else f"{name} ({mark}) to move"
    if short:
        return f"{who}."
    if cells > 9:
        return f"{who}: click a cell, or type its name (like c4) and press Enter, or use the arrows."
    keys = f"press 1–{cells}" if cells > 1 else "press 1"
    if you:
        return f"{who}: click a cell, or {keys}, or move with the arrows and press Enter."
    return f"{who}: click a cell, or {keys}, or the arrows and Enter."


def window_typing(typed: str) -> str:
    """The cell name being typed on the keyboard, before Enter plays it."""
    return f"Cell {typed}: press Enter to play it (Backspace edits, Esc clears)."


# the web page's own sentences ----------------------------------------------------------------

ROOM_FULL_WATCHING = "This game is full: you are watching."
ROOM_WATCHING = "You are watching this game."
HINT_BEING_WORKED_OUT = "A hint is being worked out already: it comes in a moment."


def invited(code: str) -> str:
    """What a visitor to a friend's link with a free seat reads before giving their name."""
    return f"You are invited to game {code}: say your name to join."


# The page's words, sent in the server's welcome: the page fills each {placeholder} and
# decides nothing about wording (noughts.web.lobby.Lobby.welcome; app.js's say()).
WEB_WORDS: dict[str, str] = {
    "title": "Noughts and crosses",
    "choose_opponent": "Choose an opponent to start.",
    "start_first": "Start a game first: choose an opponent, or play a friend.",
    "checking_board": "Checking the board…",
    "play_computer": "Play the computer",
    "type_code": "Type the code your friend sent, like K7M2-QXAB-9CDE.",
    "reconnected": "Reconnected.",
    "connection_lost": "Connection lost. Reconnecting…",
    "not_connected": "Not connected to the server yet: trying again…",
    # the game's heading and the board
    "heading": "{first} against {second}",
    "heading_waiting": "{first} — waiting for a friend to join",
    "you_as": "You ({mark})",
    "seat_as": "{name} ({mark})",
    "board_note": "{rows}×{cols} board, {k} in a row wins.",
    "board_label": "Board, {rows} rows by {cols} columns",
    "cell": "{name}, {mark}",
    "empty": "empty",
    "cell_won": "{cell}, winning line",
    "cell_last": "{cell}, last move",
    "cell_hint": "{cell}, the hint",
    # whose turn it is
    "you": "you",
    "your_friend": "your friend",
    "a_friend": "a friend",
    "the_computer": "the computer ({name})",
    "played": "{who} played {cell}. ",
    "your_turn": "Your turn: you play {mark}.",
    "friend_not_joined": "Your turn: you play {mark}. Your friend has not joined yet: send them the link below.",
    "wait_for_friend": "Waiting for your friend to join: send them the link. They play {mark}.",
    "computer_thinking": thinking("{name}"),
    "wait_for": wait_for("{name}"),
    "no_such_cell": "There is no square {typed} on this board: type a1 to {last}, then Enter.",
    "their_turn": "{name}'s turn ({mark}).",
    "their_turn_away": "{name}'s turn ({mark}). They are away for now.",
    "watching_turn": "Watching: {name} ({mark}) to move.",
    "working_out_hint": "Working out a hint…",
    # the room: its link and who sits where
    "invite_friend": "Send this link to a friend; whoever opens it first takes the other seat:",
    "invite_watch": "Anyone who opens this link can watch:",
    "link_here_only": "This link works only on this computer: the server listens on this machine alone. To play "
                      "from another device, start it on every network (host 0.0.0.0), or give it a public URL.",
    "seat_free": "{mark}: waiting for a friend to open the link…",
    "seat": "{mark}: {name}",
    "seat_you": "{mark}: {name} (you)",
    "away": "{seat} (away)",
    "watchers": "{count} watching",
    "watching": ROOM_WATCHING,
    "link_copied": "Link copied.",
    "copy_by_hand": "Copy the link by hand: the browser did not allow it.",
    # scores
    "scores_off": "Scores and history are off on this server.",
    "against_friends": "{name} against friends, all time: {wins} won, {losses} lost, {draws} drawn.",
    "against_computer": "You against {name}, all time: {wins} won, {losses} lost, {draws} drawn.",
    # playing on paper with the phone's camera (the server's `paper` messages say the game itself)
    "paper_sides": "A paper game's sheet has 3 to 5 rows and 3 to 5 columns: choose a smaller board to play on paper.",
    "paper_sheet_for": "The sheet for a {rows}×{cols} board:",
    "camera_starting": "Starting the camera…",
    "camera_needs_https": "The camera works only on a secure page (an https:// address). Serve the game over "
                          "HTTPS (the README's \"Play from a phone\") and open the https:// address the server shows.",
    "camera_refused": "The camera is not allowed for this page: allow it in the browser's site settings, then "
                      "press Start the camera again.",
    "camera_absent": "No camera was found: play on paper from a phone or a computer with a camera.",
    "camera_busy": "The camera could not be started: another app may be using it. Close that app and try again.",
    "paper_draw_for": "Draw an {mark} in",
    "paper_view": "The camera's view, with the sheet and each square as read: {seen}",
    "paper_view_none": "The camera's view: no sheet seen yet.",
}


# The page's fixed words: index.html holds a {{key}} for each, filled in (HTML-escaped) once when the
# server starts (noughts.web.app.render_page), so the page shows them before its socket opens.
WEB_PAGE: dict[str, str] = {
    "name": "noughts",
    "skip_to_board": "Skip to the board",
    "connecting": "Connecting…",
    "board_label": WEB_WORDS["board_label"].format(rows=3, cols=3),
    "undo": "Undo",
    "hint": "Hint",
    "play_again": "Play again",
    "new_game": "New game",
    # a friend's game: the name asked, the link shared
    "join_game": "Join game",
    "ask_name": "Your name, as the other player will see it",
    "join": "Join",
    "game": "Game",
    "qr_alt": "QR code of the link, for a phone's camera",
    "invite_friend": WEB_WORDS["invite_friend"],
    "copy_link": "Copy link",
    # the new-game form
    "board": "Board",
    "rows": "Rows",
    "cols": "Columns",
    "k": "In a row",
    "opponent": OPPONENT_HEADING,
    "first": FIRST_HEADING,
    "your_name": "Your name",
    "optional": "(optional)",
    "play_computer": WEB_WORDS["play_computer"],
    "play_friend": "Play a friend",
    "join_friend": "Join a friend's game",
    "code_example": "Code, like K7M2-QXAB-9CDE",
    # scores and preferences
    "high_scores": "High scores",
    "scores_rule": SCORING_RULE,
    "current_run": CURRENT_RUN,
    "plain_marks": "Marks without colour",
    "needs_javascript": "This game needs JavaScript.",
    # playing on paper with the phone's camera
    "play_paper": "Play on paper",
    "paper_heading": "Play on paper",
    "paper_how": "Print the sheet and lay it flat in good light. Hold the camera over it so that all four corner "
                 "squares show. Draw your own marks with a dark pen; when the computer plays, draw its mark where "
                 "it says.",
    "sheet_pdf": "Sheet to print (PDF)",
    "sheet_png": "Sheet as a picture (PNG)",
    "start_camera": "Start the camera",
    "speak_moves": "Say the moves aloud",
}


def web_not_for_board(unable: Iterable[tuple[str, str]]) -> str:
    """The computer players that cannot play a board, one sentence per reason ('' when every one can).

    ``unable`` holds (label, reason) pairs, each reason worded to follow its label
    (noughts.players.unable); players with the same reason share a sentence.

    >>> too_big = "it works out every move exactly, and this board is too big for that"
    >>> web_not_for_board([("Medium", too_big), ("Parsons", "it only plays 3×3 with 3 in a row"), ("Hard", too_big)])
    'Not for this board: Medium, Hard: each works out every move exactly, and this board is too big for that. \
Parsons: it only plays 3×3 with 3 in a row.'
    >>> web_not_for_board([])
    ''
    """
    by_reason: dict[str, list[str]] = {}
    for label, why in unable:
        by_reason.setdefault(why, []).append(label)
    sentences = []
    for why, labels in by_reason.items():
        said = "each " + why[3:] if len(labels) > 1 and why.startswith("it ") else why
        sentences.append(f"{', '.join(labels)}: {said}.")
    return f"Not for this board: {' '.join(sentences)}" if sentences else ""


# The server's refusals (noughts.web: protocol, rooms, lobby, guard, connection), each sent after
# a code for programs (docs/web-protocol.md): what was wrong, and what to do instead.
WEB_INTERNAL_ERROR = "Something went wrong on the server with that message; the game carries on."
WEB_NOT_AN_OBJECT = 'A message is a JSON object with a "type", like {"type": "move", "cell": 4}.'
WEB_NESTED_TOO_DEEPLY = "it is nested too deeply"
WEB_NOT_TEXT = "Messages are JSON text, not binary."
WEB_MARK_FIELD = "'mark' must be \"X\" or \"O\"."
WEB_TOKEN_FIELD = "'token' must be the seat token the server gave you (text)."
WEB_WATCH_FIELD = "'watch' must be true (only watch, take no seat) or false."
WEB_ROOM_FIELD = "'room' must be a game code (text), like \"K7M2-QXAB-9CDE\"."
WEB_NOT_A_TOKEN = ("That is not a seat token: tokens are letters, digits, - and _. "
                   "Join without one to watch or to take a free seat.")
WEB_NOT_IN_A_GAME = "You are not in a game: start one, or join one with its code."
WEB_MOVE_FOR_EARLIER_GAME = "That move was meant for an earlier game; this is a new one."
WEB_FOR_EARLIER_GAME = "That was meant for an earlier game; this is a new one."
WEB_BOARD_CHANGED = "The board changed before that move arrived: look again and choose."
WEB_GAME_NOT_OVER = "The game is still going on: finish it before a rematch."
WEB_NO_FREE_CODE = "The server could not find a free game code; try again."
WEB_CHANGED_TOO_OFTEN = "That game changed too often at once; look at the board and try again."
WEB_THINKING_FOR_MANY = "The server is thinking for many people just now; ask again in a few seconds."
WEB_STORE_UNREACHABLE = "The server cannot reach its game store just now; try again in a moment."
WEB_STORE_FULL = "The server's game store is full just now; try again in a few minutes."


def web_proxy_too_broad(network: str) -> str:
    """The warning for a --trusted-proxy network so broad that any client could be behind it.

    >>> print(web_proxy_too_broad("::/0"))  # doctest: +NORMALIZE_WHITESPACE
    noughts web: warning: the trusted proxy ::/0 takes in most of the Internet, so any client can pick the
    address its limits count (name the proxy's own address)
    """
    return (f"noughts web: warning: the trusted proxy {network} takes in most of the Internet, so any client can "
            "pick the address its limits count (name the proxy's own address)")


def web_not_this_host(host: str) -> str:
    """The answer to a request for a host name the server does not answer to (HTTP 421).

    >>> web_not_this_host("evil.example:8000")
    "This server does not answer to the name 'evil.example:8000'; use the address it was started with."
    """
    return f"This server does not answer to the name {host[:60]!r}; use the address it was started with."


# the answer to a request whose Host is not a name (or [IPv6 address]) with an optional port (HTTP 400)
WEB_BAD_HOST = "This request's Host header is not a host name with an optional port; use the address the server gave."

# the answer to an address sending HTTP requests faster than its message rate (HTTP 429)
WEB_TOO_MANY_REQUESTS = "Too many requests from your address: wait a moment, then reload the page."

# HTTPS for `noughts web` (noughts.web.tls): said on the server's terminal at start, each refusal
# of a --cert or --key file after the flag that named it.
WEB_TLS_NEEDS_CRYPTOGRAPHY = "HTTPS needs the cryptography package: pip install 'noughts[web]'"
WEB_TLS_CERT_WITHOUT_KEY = "a certificate is served with its private key: give both files"


def web_tls_fingerprint(fingerprint: str, made: bool, where: str | None) -> str:
    """What the operator compares with the certificate a phone shows before accepting it.

    >>> print(web_tls_fingerprint("AB:CD", True, "/srv/noughts/web-tls"))  # doctest: +NORMALIZE_WHITESPACE
    noughts web: a new self-signed certificate, kept in /srv/noughts/web-tls; its SHA-256
    fingerprint is AB:CD. A phone warns that it does not know it: accept it only if the fingerprint it shows
    is this one.
    """
    if where is None:
        return f"noughts web: the certificate's SHA-256 fingerprint is {fingerprint}."
    kept = f"a new self-signed certificate, kept in {where}" if made else f"the self-signed certificate kept in {where}"
    return (f"noughts web: {kept}; its SHA-256 fingerprint is {fingerprint}. A phone warns that it does not know "
            "it: accept it only if the fingerprint it shows is this one.")


def web_tls_cannot_keep(folder: str, reason: str) -> str:
    return (f"cannot keep the HTTPS certificate in {folder} ({reason}): set XDG_DATA_HOME to a folder that can be "
            "written, or give a certificate of your own")


def web_tls_unreadable(path: str, reason: str) -> str:
    return f"cannot read {path!r:.200} ({reason})"


def web_tls_not_a_certificate(path: str) -> str:
    return f"{path!r:.200} is not a PEM certificate (text beginning -----BEGIN CERTIFICATE-----)"


def web_tls_not_a_key(path: str) -> str:
    return f"{path!r:.200} is not a PEM private key (text beginning -----BEGIN PRIVATE KEY-----)"


def web_tls_key_encrypted(path: str) -> str:
    return (f"{path!r:.200} is a private key locked with a password, which the server cannot type: "
            "save it unlocked (openssl pkey -in KEY -out KEY2) where only you can read it")


def web_tls_key_mismatch(key: str, cert: str) -> str:
    return f"{key!r:.200} is not the private key of the certificate {cert!r:.200}"


def web_tls_refused(path: str, reason: str) -> str:
    return f"the TLS library cannot serve with {path!r:.200} and its key ({reason})"


# what someone watching a game tried to do, by the message's type
_WEB_SEATED_ACTIONS = {"move": "move", "undo": "take back a move", "hint": "ask for a hint",
                       "rematch": "start a rematch"}


def web_sentence(said: str) -> str:
    """An error's text as a sentence for the page: a capital letter first, a full stop last.

    >>> web_sentence("medium cannot play this board: it works out every move exactly")
    'Medium cannot play this board: it works out every move exactly.'
    """
    return said[:1].upper() + said[1:].rstrip(".") + "."


def web_too_big(size: int, most: int) -> str:
    return f"That message is {size} bytes; messages are at most {most} bytes."


def web_not_json(reason: str) -> str:
    return f"That message is not valid JSON ({reason})."


def web_unknown_type(kind: str, kinds: Iterable[str]) -> str:
    """``kind`` is cut short by the caller; the sentence quotes it."""
    return f"There is no message type {kind!r}; the types are {', '.join(kinds)}."


def web_unknown_field(kind: str, field: str) -> str:
    return f"A {kind} message has no field {field!r}."


def web_id_field(most: int) -> str:
    return f"'id' must be text of 1 to {most} plain characters, like \"m7\"."


def web_text_field(field: str) -> str:
    return f"'{field}' must be text, like \"Ann\"."


def web_number_field(field: str, low: int | None = None, high: int | None = None) -> str:
    """'rows' must be a whole number from 1 to 15 (or just a whole number)."""
    span = f" from {low} to {high}" if low is not None and high is not None else ""
    return f"'{field}' must be a whole number{span}."


def web_k_field(longest: int, rows: int, cols: int) -> str:
    return f"'k' (marks in a row to win) must be a whole number from 1 to {longest} on a {rows}×{cols} board."


def web_opponent_field(names: Iterable[str]) -> str:
    return f"'opponent' must be one of {', '.join(names)}."


def web_first_field(rules: Iterable[str]) -> str:
    return f"'first' says who moves first: {', '.join(rules)}."


def web_not_a_code(typed: str) -> str:
    """``typed`` (cut short by the caller) is no game code at all."""
    return f"There is no game with the code {typed!r}: a code is twelve letters and digits, like K7M2-QXAB-9CDE."


def web_no_such_game(code: str, minutes: int) -> str:
    return f"There is no game with the code {code}: it may have expired after {minutes} minutes without a move."


def web_game_gone(code: str) -> str:
    return f"Game {code} is over and gone (it expired)."


def web_game_closed(code: str, minutes: int) -> str:
    return f"Game {code} was closed after {minutes} minutes without a move."


def web_no_cell(cell: int) -> str:
    """A cell number beyond every board the page plays."""
    return f"There is no cell {cell}: no board here has that many cells."


def web_negative_cell(cell: int) -> str:
    """A cell number below 0: cells are counted from 0."""
    return f"There is no cell {cell}: cells are counted from 0 (or named, like b2)."


def web_move_needs_cell(shown: str) -> str:
    """A move without a cell, or with one that names nothing; ``shown`` is what came, quoted and cut short."""
    return f"A move needs a 'cell': a number counted from 0, or a name like b2, not {shown}."


def web_no_cell_on_board(shown: str | int, last: int, last_name: str) -> str:
    return f"There is no cell {shown}: cells are 0 to {last}, or a1 to {last_name}."


def web_not_your_mark(mine: str, mark: str) -> str:
    return f"You play {mine}, so you cannot move for {mark}."


def web_watching_cannot(kind: str) -> str:
    """Someone watching a game sent a message of type ``kind`` that only a player may send.

    >>> web_watching_cannot("undo")
    'You are watching this game, so you cannot take back a move. Choose New game to play your own.'
    """
    action = _WEB_SEATED_ACTIONS.get(kind, kind)
    return f"You are watching this game, so you cannot {action}. Choose {WEB_PAGE['new_game']} to play your own."


def web_wrong_token(code: str) -> str:
    return (f"That seat token does not belong to game {code}, so it cannot take a seat. "
            "Join without it to watch or to take a free seat.")


def web_crowded(code: str, watchers: int) -> str:
    return f"Game {code} already has {watchers} people watching; try again later."


def web_server_full(games: int) -> str:
    return f"The server is busy: it already holds {games} games. Try again in a few minutes."


def web_rooms_per_connection(most: int) -> str:
    return f"One connection may start at most {most} games. Reload the page to go on."


def web_rooms_per_address(held: int) -> str:
    return (f"Your address already has {plural(held, 'open game')}, the most one address may have. "
            "Finish or leave one, or wait for it to expire.")


def web_locked_out(seconds: int) -> str:
    return (f"Too many games joined that do not exist or with a wrong token from your address: "
            f"try again in {plural(seconds, 'second')}.")


def web_too_many_joins(per_second: float) -> str:
    return f"Too many joins from your address: at most {per_second:g} a second. Wait a moment and try again."


def web_too_much_work(seconds: int) -> str:
    """An address whose hints, board checks and computer moves have taken its share of the server's time."""
    return (f"The server has done a lot of thinking for your address just now (hints, computer moves, board "
            f"checks): try again in {plural(seconds, 'second')}.")


def web_too_many_messages(per_second: float, *, address: bool) -> str:
    """Messages beyond the rate of one socket, or (``address``) of all of one address's sockets together."""
    most = f"{per_second:g} a second" + (" from your address" if address else "")
    return f"Too many messages: at most {most}. Some were ignored."


# game record files (noughts.records, `noughts import`) ----------------------------------------

def records_file_too_large(name: str, most: int) -> str:
    return f"{name} is larger than {most:,} bytes: too large for a file of game records"


def records_charset_unknown(name: str, charset: str) -> str:
    """SGF's CA property names a charset that cannot be read (as sgfmill, only ASCII-based codecs Python has)."""
    return (f"{name} says its text is in the charset {shown(charset, 40)} (its CA property), which noughts "
            "cannot read: save it as UTF-8")


def records_not_in_charset(name: str, charset: str) -> str:
    return f"{name} is not text in the charset {shown(charset, 40)} that its CA property names: save it as UTF-8"


def record_too_long(where: str, most: int) -> str:
    return f"{where} is longer than {most:,} characters, more than a game record can be"


def record_too_many_moves(where: str, cells: int) -> str:
    return f"{where} has more moves than its board has cells ({cells})"


# the engine protocol's own sentences (noughts.engine) --------------------------------------

ENGINE_NUMBER_TOO_LONG = ("the request is not valid JSON for this engine: it holds a number too long to read "
                          "(no board, cell or id needs more than a few digits)")


# paper mode's own sentences (noughts.paper: the web page's "Play on paper" and `noughts paper`) -----

PAPER_NEXT_GAME = "For another game, show me a new empty sheet."


def paper_your_move(mark: str) -> str:
    return f"Your move: draw an {mark} in an empty square."


def paper_draw_mine(name: str, mark: str, cell: str) -> str:
    """The computer's move, for the person to draw: 'Medium plays b2: draw an O in b2 for it.'"""
    return f"{name} plays {cell}: draw an {mark} in {cell} for it."


def paper_no_sheet(why: str) -> str:
    return f"I cannot see the sheet: {why}".rstrip() + ("" if why.endswith(".") else ".") + " Hold it in view."


def paper_wrong_sheet(rows: int, cols: int) -> str:
    return f"This is not a {rows}×{cols} sheet: show me the sheet of this game."


def paper_unsure(cells: str) -> str:
    return f"I am not sure what is in {cells}: make the mark darker and clearer, or the square cleaner."


def paper_overdrawn(cells: str) -> str:
    return f"There is a new mark on {cells}, which is already taken: play in an empty square."


def paper_too_many(cells: str) -> str:
    return f"I see new marks in {cells}: one move at a time, please."


def paper_wrong_square(drawn: str, owed: str, mark: str) -> str:
    return f"That is {drawn}, not {owed}: the {mark} goes in {owed}."


def paper_wrong_shape(cell: str, seen: str, mark: str) -> str:
    return f"The mark in {cell} looks like an {seen}, but it should be an {mark}."


# paper mode in the web game (noughts.web.paper): the server's answers to the page's frames and requests
PAPER_NOT_A_PICTURE = "That frame is not a picture I can read: send the camera's view as a JPEG, PNG or WebP."
PAPER_NOT_IN_PAPER_GAME = "Pictures of the sheet are for a paper game: start one with \"Play on paper\" first."
PAPER_MOVES_ON_PAPER = "In a paper game, moves are drawn on the sheet: show me the sheet instead."
PAPER_CANNOT_READ = "The server cannot read pictures of the sheet just now; play on the screen instead."
PAPER_NO_PRINTABLE_SHEET = "This server cannot make the sheet as a picture just now; print the SVG sheet instead."


def paper_sheet_sides(fewest: int, most: int) -> str:
    return f"A paper game's sheet has {fewest} to {most} rows and {fewest} to {most} columns."


def paper_slow_down(per_second: float) -> str:
    return f"Slow down: I look at {per_second:g} pictures a second at most, and skipped some."


def paper_frame_too_big(size: int, most: int) -> str:
    return f"That picture is {size // 1024} KB; the most is {most // 1024} KB: send it smaller."


def paper_frame_too_many_pixels(width: int, height: int, most: int) -> str:
    return f"That picture is {width}×{height} pixels; the most is {most:,} pixels: send it smaller."


def paper_no_such_sheet(size: str, fewest: int, most: int) -> str:
    return (f"There is no printable sheet {size[:20]!r}: sizes run from {fewest}x{fewest} to {most}x{most}, "
            f"like {fewest}x{fewest}k{fewest}.")


# `noughts paper` in the terminal
PAPER_VIDEO_ENDED = "The video has ended."
PAPER_CAMERA_GONE = "The camera stopped giving pictures (unplugged, or taken by another program)."
PAPER_NO_WINDOW = "No window can be opened here (OpenCV without a display): watching in the terminal only."


def paper_watching(source: str, rows: int, cols: int) -> str:
    """`noughts paper` starting: what it watches and what to show it."""
    return f"Watching {source}: show it a {rows}×{cols} sheet with its four corner squares. Ctrl-C stops."


def paper_banner(name: str, mark: str, cell: str) -> str:
    """The computer's move in large letters across the terminal, above the sentence that says it.

    >>> print(paper_banner("Easy", "O", "b2"))
    ==============================
    ===   EASY PLAYS B2 (O)    ===
    ==============================
    """
    words = f"{name} plays {cell} ({mark})".upper()
    width = max(30, len(words) + 12)
    return "\n".join(["=" * width, "===" + words.center(width - 6) + "===", "=" * width])


def paper_stopped(position: str, over: bool) -> str:
    """Ctrl-C in `noughts paper`: where the game was left."""
    if over:
        return f"Stopped. The last game ended at {position} and is kept with the scores."
    return f"Stopped during a game, at {position}: that game is not recorded."


# the panel's and the robot's own sentences ---------------------------------------------------


def grbl_cannot_home(port: str) -> str:
    """GRBL with homing off (``$22=0``, as it comes) while the robot's configuration asks to home.

    >>> grbl_cannot_home("/dev/ttyUSB0")[:70]
    'GRBL on /dev/ttyUSB0 has homing turned off ($22=0), so it cannot find '
    """
    return (f"GRBL on {port} has homing turned off ($22=0), so it cannot find its origin by itself: either set "
            "homing = false in the [grbl] table of the robot's configuration and switch GRBL on with the pen at "
            "the corner that [machine] sheet_origin is measured from (X0 Y0), or give the machine limit switches "
            "and send $22=1 to GRBL")


def grbl_travel_too_big(travel: tuple[float, float], grbl_travel: tuple[float, float]) -> str:
    """The configured travel does not fit in GRBL's machine space (``$130``, ``$131``).

    >>> print(grbl_travel_too_big((300, 200), (200, 200)).replace(", but", ",\\nbut"))
    the robot's configuration says the machine travels 300 × 200 mm ([machine] travel),
    but GRBL's own settings say 200 × 200 mm ($130, $131): make them agree
    """
    return (f"the robot's configuration says the machine travels {travel[0]:g} × {travel[1]:g} mm ([machine] travel), "
            f"but GRBL's own settings say {grbl_travel[0]:g} × {grbl_travel[1]:g} mm ($130, $131): make them agree")


def robot_kept_game(position: str, moves: int, saved: str, machine: str) -> str:
    """What a kept robot game is, said before it is carried on.

    >>> robot_kept_game(".../.X./...", 1, "2026-11-28 19:40", "the sim robot")
    'The kept game: .../.X./... after 1 move, kept 2026-11-28 19:40 on the sim robot.'
    """
    return f"The kept game: {position} after {moves} move{'' if moves == 1 else 's'}, kept {saved} on {machine}."


def robot_kept_elsewhere(where: str, machine: str, this: str) -> str:
    """A kept robot game made on another machine (or configuration) than this one.

    >>> print(robot_kept_elsewhere("k.json", "the grbl robot", "the sim robot"))  # doctest: +NORMALIZE_WHITESPACE
    the game kept in k.json was played on the grbl robot, not the sim robot: carry it on with that
    robot's configuration, or delete k.json to start afresh
    """
    return (f"the game kept in {where} was played on {machine}, not {this}: carry it on with that robot's "
            f"configuration, or delete {where} to start afresh")


def photo_too_big(path: str, width: int, height: int, limit: int) -> str:
    """A photo refused before it is decoded: its header says it has more than ``limit`` pixels.

    >>> print(photo_too_big("big.png", 30000, 30000, 120_000_000))  # doctest: +NORMALIZE_WHITESPACE
    the photo big.png is 30000×30000 pixels, more than the 120 million read here:
    shrink it to a few thousand pixels across
    """
    return (f"the photo {path} is {width}×{height} pixels, more than the {limit / 1e6:.0f} million read here: "
            "shrink it to a few thousand pixels across")


def robot_sim_calibration(config: str) -> str:
    """After calibrating on the sim, whose readings went to a file of their own, not ``config``.

    >>> print(robot_sim_calibration("robot.toml"))  # doctest: +NORMALIZE_WHITESPACE
    These are the simulated robot's readings, so robot.toml is left as it was: calibrate the real robot
    (with its own backend) to record its own.
    """
    return (f"These are the simulated robot's readings, so {config} is left as it was: calibrate the real robot "
            "(with its own backend) to record its own.")


LCD_WIDTH = 16
"""Characters on each of the panel's two LCD rows."""
PANEL_TITLE = "TIC TAC TOE"  # the seed's start-up screen
PANEL_YOUR_TURN = "Your turn..."
PANEL_PRESS_RESET = "Press reset..."
PANEL_NO_SWITCH = "this build has no two-person switch (gpio.switch); the uno build has one"


def robot_game_kept(where: str, resume_with: str | None = None) -> str:
    """A game left unfinished, kept in the file ``where``; ``resume_with``: how to carry it on.

    >>> robot_game_kept("game.json", "'noughts robot --resume'")
    "The game is kept: 'noughts robot --resume' carries on with it (game.json)."
    >>> robot_game_kept("game.json")
    'The game is kept (game.json): resuming the robot carries on with it.'
    """
    if resume_with is None:
        return f"The game is kept ({where}): resuming the robot carries on with it."
    return f"The game is kept: {resume_with} carries on with it ({where})."


def panel_turn(name: str) -> str:
    """Line 1 of the panel's LCD when one of two people is to move."""
    return f"{name}'s turn..."


def let_go(cell: int) -> str:
    """A cell button still held from before the game began: it does nothing until let go.

    >>> let_go(5)
    'Let go of cell 5'
    """
    return f"Let go of cell {cell}"


def short_first_label(rule: str, you: str = "You", other: str = "Opponent", width: int = LCD_WIDTH) -> str:
    """The menu's label for a rule of who starts (:func:`first_choices`), in ``width`` columns.

    A name too long for them is said as the menu says it without names ('Opponent first').

    >>> short_first_label("computer", other="Hard"), short_first_label("computer", other="Arduino rules")
    ('Hard first', 'Opponent first')
    >>> short_first_label("me", "Green", "Red"), short_first_label("alternate", "Green", "Red")
    ('Green first', 'Take turns')
    """
    label = ""
    for a, b in ((you, other), (you, "Opponent"), ("You", "Opponent")):
        label = next(label for name, label, _ in first_choices(a, b) if name == rule)
        if len(label) <= width:
            break
    return label[:width]


def who_starts(rule: str, you: str = "You", other: str = "Opponent") -> str:
    """A rule of who starts in a sentence, with its menu label: for a console without a menu of it.

    >>> who_starts("alternate", other="Medium")
    'Who moves first: Take turns (you move first in the first game, then the first move alternates).'
    """
    label, about = next((label, about) for name, label, about in first_choices(you, other) if name == rule)
    return f"{FIRST_HEADING}: {label} ({about})."


def short_tally(first: str, second: str, tally: Sequence[int], width: int = LCD_WIDTH) -> str:
    """:func:`tally_line` in ``width`` columns: the same three counts, the names cut to fit.

    >>> short_tally("You", "Hard", [2, 1, 0]), short_tally("You", "Arduino rules", [2, 1, 0])
    ('You:2 Hard:1 D:0', 'You:2 Ard:1 D:0')
    >>> short_tally("Green", "Red", [1, 0, 3]), short_tally("You", "Medium", [33, 33, 33])
    ('Gre:1 Red:0 D:3', 'Y:33 M:33 D:33')
    """
    line = tally_line(first, second, tally)
    for cut, draws, sep in ((None, "D", ":"), (3, "D", ":"), (1, "D", ":"), (1, "D", "")):
        if len(line) <= width:
            break
        line = " ".join(f"{name[:cut]}{sep}{count}" for name, count in zip((first, second, draws), tally, strict=True))
    return line[:width]


def short_match_line(first: str, second: str, score: Sequence[int], width: int = LCD_WIDTH) -> str:
    """Who won a best-of match (:func:`match_sentence`) in ``width`` columns, without the score.

    >>> short_match_line("You", "Hard", [2, 1, 0]), short_match_line("Green", "Red", [0, 2, 1])
    ('You win match', 'Red wins match')
    >>> short_match_line("You", "Hard", [1, 1, 0])
    'Match drawn'
    """
    if score[0] == score[1]:
        return "Match drawn"
    winner = first if score[0] > score[1] else second
    verb = "win" if winner == "You" else "wins"
    for line in (f"{winner} {verb} the match", f"{winner} {verb} match", f"Match: {winner}"):
        if len(line) <= width:
            return line
    return line[:width]

