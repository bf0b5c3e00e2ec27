"""The strong player on 15×15 (k=5) in families of tactical positions it must never get wrong.

Each family is one small pattern placed everywhere it fits (every direction, every offset, every
gap), so a rule is checked over all of its placements rather than on one example. The verdicts
come from :class:`~noughts.board.Board` and the small, independent VCF search of
``tests/test_strong.py``, not from the player's own search. Budgets are in positions, so the
moves do not depend on the machine.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from functools import cache

from tests.test_strong import forced_after, threats, vcf_wins

from noughts import Board
from noughts.budget import Budget
from noughts.players.strong import StrongPlayer

SIZE, K = 15, 5
DIRECTIONS = ((0, 1), (1, 0), (1, 1), (1, -1))


def strong(nodes: int) -> StrongPlayer:
    return StrongPlayer(random.Random(0), budget=Budget(nodes=nodes))


def cell(row: int, col: int) -> int:
    return row * SIZE + col


def board_of(x: set[int], o: set[int]) -> Board:
    return Board.from_bits(sum(1 << c for c in x), sum(1 << c for c in o), SIZE, SIZE, K)


def windows(step: int) -> Iterator[tuple[int, ...]]:
    """Every line of five cells in every direction whose first cell is on a ``step`` grid."""
    for dr, dc in DIRECTIONS:
        for row in range(0, SIZE, step):
            for col in range(0, SIZE, step):
                cells = [(row + dr * i, col + dc * i) for i in range(K)]
                if all(0 <= r < SIZE and 0 <= c < SIZE for r, c in cells):
                    yield tuple(cell(r, c) for r, c in cells)


def spare_marks(count: int, avoid: set[int], rng: random.Random) -> set[int]:
    """``count`` isolated marks (no two within two cells of each other or of ``avoid``)."""
    chosen: set[int] = set()
    while len(chosen) < count:
        candidate = rng.randrange(SIZE * SIZE)
        row, col = divmod(candidate, SIZE)
        if all(max(abs(row - r), abs(col - c)) > 2 for r, c in (divmod(x, SIZE) for x in avoid | chosen)):
            chosen.add(candidate)
    return chosen


@cache
def line_pairs() -> tuple[tuple[tuple[int, ...], int, tuple[int, ...], int], ...]:
    """Pairs of lines of five that do not touch: (X's line, its gap, O's line, its gap).

    X's line is every window on a 2-cell grid in every direction, with its gap at each of the
    five places; O's line is another window chosen from the index, far enough away.
    """
    lines = list(windows(2))
    pairs = []
    for index, line in enumerate(lines):
        for gap in range(K):
            theirs = lines[(index * 7 + gap * 13 + len(lines) // 2) % len(lines)]
            if any(max(abs(a // SIZE - b // SIZE), abs(a % SIZE - b % SIZE)) <= 2 for a in line for b in theirs):
                continue
            pairs.append((line, line[gap], theirs, theirs[(gap + index) % K]))
    assert len(pairs) > 300
    return tuple(pairs)


def test_it_wins_in_one_wherever_its_four_lies_even_when_the_opponent_has_one() -> None:
    player = strong(500)
    for line, gap, theirs, their_gap in line_pairs():
        board = board_of(set(line) - {gap}, set(theirs) - {their_gap})
        chosen = player.choose(board)
        assert chosen == gap or threats(board, True) >> chosen & 1, str(board)  # an open four wins at both ends
        assert board.play(chosen).winner == "X" and player.last_reason == "win"


def test_it_blocks_the_opponents_four_wherever_it_lies() -> None:
    player = strong(500)
    for line, gap, theirs, their_gap in line_pairs():
        # X holds three of its line (no four), O a four: X must take O's gap
        x = set(line) - {gap, line[(line.index(gap) + 2) % K]}
        x |= spare_marks(1, x | set(theirs), random.Random(gap))
        board = board_of(x, set(theirs) - {their_gap})
        assert not threats(board, True)
        chosen = player.choose(board)
        assert chosen == their_gap or threats(board, False) >> chosen & 1, str(board)
        assert player.last_reason == "block"


# four-threes: made by us, refuted against them ---------------------------------------------------

FOUR_THREE_X = {cell(7, 4), cell(7, 5), cell(7, 6), cell(5, 7), cell(6, 7)}
"""e8 f8 g8 and h6 h7: h8 makes a four on row 8 and an open three on column h."""
FOUR_THREE_O = {cell(7, 3)}
"""d8 closes row 8 on one side, so X's row is a four after h8, not an open four."""


@cache
def four_three_positions() -> tuple[Board, ...]:
    """The four-three shape in each of the board's 8 symmetries and shifted around the centre.

    X (the side with the shape) is to move. O has four more marks far away in the corners.
    """
    base_x, base_o = FOUR_THREE_X, FOUR_THREE_O | {cell(0, 0), cell(0, 14), cell(14, 0), cell(14, 14)}
    geometry = Board(SIZE, SIZE, K).geometry
    found = []
    for shift_r, shift_c in ((0, 0), (-3, 2), (3, -2), (2, 3)):
        moved_x = {c + shift_r * SIZE + shift_c for c in base_x}
        moved_o = {c + shift_r * SIZE + shift_c for c in FOUR_THREE_O} | (base_o - FOUR_THREE_O)
        board = board_of(moved_x, moved_o)
        for perm in geometry.symmetries:
            found.append(board.transform(perm))
    return tuple(found)


def test_it_makes_a_four_three_in_every_orientation() -> None:
    player = strong(3_000)
    for board in four_three_positions():
        chosen = player.choose(board)
        assert player.last_reason == "vcf", str(board)
        assert forced_after(board.play(chosen), 6), str(board)  # checked by the independent search


def test_it_refutes_the_opponents_four_three_in_every_orientation() -> None:
    """The same shapes with O to move (O's spare mark placed apart): after O's move X has no VCF."""
    player = strong(4_000)
    rng = random.Random(2)
    for board in four_three_positions()[::5]:
        x = {c for c in range(SIZE * SIZE) if board.x >> c & 1}
        o = {c for c in range(SIZE * SIZE) if board.o >> c & 1}
        # give X one more mark, apart from everything: now O is to move, facing the four-three
        position = board_of(x | spare_marks(1, x | o, rng), o)
        passed = board_of(x | spare_marks(1, x | o, rng), o | spare_marks(1, x | o, rng))  # O passes
        assert vcf_wins(passed, 4)  # X threatens the four-three
        chosen = player.choose(position)
        assert not vcf_wins(position.play(chosen), 8), str(position)


# wins by threats built from quiet moves: defences found in lost games -----------------------------

def replay(moves: str) -> Board:
    board = Board(SIZE, SIZE, K)
    for name in moves.split():
        board = board.play(board.parse_cell(name))
    return board


# Positions from games strong lost as O against minimax (benchmarks/strong.py, games 1 and 7), O to
# move, X threatening a win by threats (fours and threes). The answers that hold are threes of O's
# own, so that O can meet X's next three with a four. "holding" was found by trying every cell near
# the marks against X's threats five moves deep (100,000 positions each; None: not asserted, the
# player's budget cannot tell the holding threes of game 1 from the others); "losing" are the cells
# that lose to a three-move attack, among them the previous version's choice (j7, e7).
VCT_DEFENCES = (
    ("j6 j9 i5 i9 k7 l8 k9 i7 i6 k6 j5", None,
     {"j4", "h4", "h7", "k4", "j7", "j3", "l3", "i4", "g3", "h5", "k5", "l5", "g5"}),
    ("f8 j6 e9 i5 d10 g7 f10", {"g3", "h4", "k7", "l8", "k3", "j4", "h6"}, {"e7", "g11"}),
)


def test_it_answers_a_win_by_threats_with_a_three_of_its_own() -> None:
    for moves, holding, losing in VCT_DEFENCES:
        board = replay(moves)
        player = strong(40_000)
        chosen = board.cell_name(player.choose(board))
        assert player.last_reason == "defend-vct", moves
        assert chosen not in losing and (holding is None or chosen in holding), (moves, chosen)
        assert not vcf_wins(board.play(board.parse_cell(chosen)), 8)  # X has no win by fours either


# Game 34 of benchmarks/strong.py's usual openings (--opening 0) at bb17322, O to move against X's win
# by threats: of the 22 defences tried, six cost 1,200-2,000 positions each to check at depth 2 and
# were tried twice, so no check at depth 7 finished and the alpha-beta search chose among 8 that
# held at depth 2; it played i4, which loses (X wins by threats after it: f5). "holding" leave X no
# win by threats nine moves deep (400,000 positions a check); l7, m10 and n11 show it in under 1,600.
STARVED_DEFENCE = "i8 i9 h9 j7 h7 h8 g6 j9 j10 j8 j6 k9 i6 h6 i7 k7 l6 k6 k5"
STARVED_HOLDING = {"l7", "m10", "n11", "m6", "j11", "m8"}


def test_shallow_defence_checks_leave_the_deep_ones_enough_of_the_budget() -> None:
    board = replay(STARVED_DEFENCE)
    player = strong(40_000)
    chosen = board.cell_name(player.choose(board))
    assert player.last_reason == "defend-vct"
    assert chosen in STARVED_HOLDING


# A position from a game strong lost as O against minimax (benchmarks/strong.py at bd6b2f0, game 7,
# ply 9), O to move: X wins by threats (fours and threes) five moves deep were it X's move. The
# depth-first search needed 107,000 positions to find that, more than its share of 40,000, so the
# previous version saw no threat and played a quiet move (f9). Proof-number search finds it in
# about 8,000. (The position is lost whatever O plays: the attack started earlier.)
UNSEEN_ATTACK = "f8 j6 e9 i5 d10 g7 f10 h4 k7"


def test_it_sees_a_win_by_threats_that_depth_first_search_could_not_afford() -> None:
    board = replay(UNSEEN_ATTACK)
    player = strong(40_000)
    player.choose(board)
    assert player.last_reason == "defend-vct"


def test_a_block_forced_by_the_defenders_four_does_not_count_as_an_attacking_move() -> None:
    """X's win here takes five moves of X, one of them the forced block of a four O makes on the
    way: four threats. Both threat searches find it at depth 4 (counting the block, only at 5)."""
    from noughts.players.strong import _State

    board = replay(UNSEEN_ATTACK)
    d8 = board.parse_cell("d8")
    assert _State(board, Budget(nodes=100_000)).vct(1, 4) == d8
    assert _State(board, Budget(nodes=100_000)).pn_vct(1, 4) == d8
    assert _State(board, Budget(nodes=100_000)).vct(1, 3) is None


# Strong's third move as X against arduino (benchmarks/strong.py, game 3): X wins by threats (g7).
# Depth-first search finds the win at depth 5 in about 5,000 positions; the version that went to
# proof-number search after depth 3 did not find it within its share, searched all 40,000
# positions (0.8 s) instead and won a move later.
CHEAP_ATTACK = "h7 j9 g8 a5 f7 d6"


def test_it_finds_its_own_shallow_win_by_threats_cheaply() -> None:
    board = replay(CHEAP_ATTACK)
    budget = Budget(nodes=40_000)
    player = strong(40_000)
    assert board.cell_name(player.choose_within(board, budget)) == "g7"
    assert player.last_reason == "vct"
    assert budget.spent < 10_000, budget.spent


def test_proof_number_search_agrees_with_the_depth_first_search() -> None:
    """Both search the same tree of threats, so with budget to spare they find a win at the same depths."""
    from noughts.budget import Budget as Unlimited
    from noughts.players.strong import _State

    checked = wins = 0
    for moves in (UNSEEN_ATTACK, *(moves for moves, *_ in VCT_DEFENCES)):
        board = replay(moves)
        for cell in sorted(_State(board, Unlimited()).frontier)[::7]:
            after = board.play(cell)  # X to move: does X win by threats within three of its moves?
            depth_first = _State(after, Unlimited()).vct(1, 3)
            best_first = _State(after, Unlimited()).pn_vct(1, 3)
            assert (depth_first is None) == (best_first is None), (moves, board.cell_name(cell))
            checked += 1
            wins += depth_first is not None
    assert checked > 20 and 0 < wins < checked, (checked, wins)


def test_threes_found_without_placing_a_mark_are_the_threes_found_by_placing_it() -> None:
    from noughts.budget import Budget as Unlimited
    from noughts.players.strong import _State

    rng = random.Random(5)
    checked = threes = 0
    for _ in range(25):
        board = Board(SIZE, SIZE, K)
        for _ in range(rng.randrange(6, 30)):  # random marks in the middle, where lines cross
            board = board.play(rng.choice([c for c in range(SIZE * SIZE) if board[c] is None
                                           and abs(c // SIZE - 7) <= 3 and abs(c % SIZE - 7) <= 3]))
            if board.is_over:
                break
        if board.is_over:
            continue
        state = _State(board, Unlimited())
        for side in (1, 2):
            for cell in sorted(state.frontier):
                state.play(cell, side)
                placed = state.makes_open_four_threat(side, cell)
                state.undo(cell, side)
                assert state.makes_three(side, cell) == placed, (str(board), side, cell)
                checked += 1
                threes += placed
    assert checked > 1_000 and 50 < threes < checked, (checked, threes)


def test_proof_number_search_keeps_the_positions_it_proved() -> None:
    # The same position reached by another order of threats is proved at once: here the root again.
    from noughts.players.strong import _State

    board = replay(UNSEEN_ATTACK)
    state = _State(board, Budget())
    first = state.pn_vct(1, 7)
    assert first is not None
    proof, searched = set(state.proof), state.nodes
    state.proof.clear()
    assert state.pn_vct(1, 7) == first
    assert state.nodes - searched < 10, (searched, state.nodes)
    # the proof's cells come back too (where to defend); the first search's set also holds the
    # cells of other wins it found on the way
    assert first in state.proof and len(state.proof) > 5 and state.proof <= proof, (state.proof, proof)
