"""Set matching (Uiterwijk): every draw it claims checked by the plain solver and by playing its strategy."""

from __future__ import annotations

from functools import cache

import pytest

from noughts import solver
from noughts.board import Board, Geometry
from noughts.cli import main
from noughts.solver.matching import (
    Answer,
    Block,
    SetMatching,
    draw_by_set_matching,
    find_set_matching,
    holds,
)
from test_proofs import plain_values

# boards and plies where the plain solver is cheap from every position: 3×4 with four (pairings
# only), 3×4 with three (a first-player win: claims only where X has already spoilt it), 4×4 with
# four (the matching set's showcase), 4×5 with four (nested matching sets); the slow test goes
# deeper. Boards of up to 9 cells are checked in every position against a search of every move.
QUICK = [((3, 4, 4), 3), ((3, 4, 3), 3), ((4, 4, 4), 0), ((4, 5, 4), 0)]
DEEP = [((4, 4, 4), 3), ((4, 5, 4), 2), ((4, 4, 3), 3)]


@cache
def positions(shape: tuple[int, int, int], plies: int) -> tuple[Board, ...]:
    """The positions of the first ``plies`` plies up to symmetry, games over left out."""
    seen = {Board(*shape).canonical().key: Board(*shape)}
    frontier = [Board(*shape)]
    for _ in range(plies):
        following = []
        for board in frontier:
            for cell in board.legal_moves:
                child = board.play(cell)
                key = child.canonical().key
                if key not in seen and not child.is_over:
                    seen[key] = child
                    following.append(child)
        frontier = following
    return tuple(seen.values())


def claims(shapes: list[tuple[tuple[int, int, int], int]]) -> list[tuple[Board, str, SetMatching]]:
    """Every (position, defender, set matching) the finder claims on the boards of ``shapes``."""
    found = []
    for shape, plies in shapes:
        for board in positions(shape, plies):
            x_to_move = not board.ply & 1
            for defender, attacker, mine, to_move in (("O", board.x, board.o, not x_to_move),
                                                      ("X", board.o, board.x, x_to_move)):
                matching = find_set_matching(board.geometry, attacker, mine, defender_to_move=to_move)
                if matching is not None:
                    found.append((board, defender, matching))
    return found


def check_claims(shapes: list[tuple[tuple[int, int, int], int]]) -> tuple[int, int]:
    """Check every claim with :func:`holds` and the plain solver: (claims, those with matching sets)."""
    checked = set_blocks = 0
    for board, defender, matching in claims(shapes):
        attacker, mine = (board.x, board.o) if defender == "O" else (board.o, board.x)
        to_move = board.turn == defender
        assert holds(board.geometry, attacker, mine, matching, defender_to_move=to_move), (board, defender)
        value = solver.solve(board).value  # for the side to move
        defender_value = value if to_move else -value
        assert defender_value >= 0, f"{board} : set matching claims {defender} holds, the solver says it loses"
        checked += 1
        set_blocks += any(block.answers for block in matching.blocks)
    return checked, set_blocks


def test_every_claim_meets_the_conditions_and_the_plain_solver_agrees() -> None:
    checked, set_blocks = check_claims(QUICK)
    # 3×4 with four: both sides everywhere; 3×4 with three: some 20; 4×4 and 4×5: both ways
    assert checked >= 2 * len(positions((3, 4, 4), 3)) + 18 + 2 + 2, checked
    assert set_blocks >= 8 + 2 + 2, set_blocks


def reachable(shape: tuple[int, int, int]) -> list[Board]:
    """Every reachable position of the shape where the game is not over."""
    seen = {Board(*shape).key: Board(*shape)}
    frontier = list(seen.values())
    while frontier:
        following = []
        for board in frontier:
            for cell in board.legal_moves:
                child = board.play(cell)
                if child.key not in seen and not child.is_over:
                    seen[child.key] = child
                    following.append(child)
        frontier = following
    return list(seen.values())


def test_every_claim_on_boards_of_up_to_9_cells_is_true_in_every_position() -> None:
    # every board of two or three rows and up to 9 cells, k from 2 (one row has pairings only):
    # no claim the plain search refutes
    positions_seen = claimed = set_blocks = 0
    for rows in range(2, 4):
        for cols in range(rows, 9):
            for k in range(2, max(rows, cols) + 1):
                if rows * cols > 9:
                    continue
                geometry = Board(rows, cols, k).geometry
                value = plain_values(geometry)
                for board in reachable((rows, cols, k)):
                    positions_seen += 1
                    x_to_move = not board.ply & 1
                    mover_value = value(*((board.x, board.o) if x_to_move else (board.o, board.x)))
                    for defender, attacker, mine, to_move in (("O", board.x, board.o, not x_to_move),
                                                              ("X", board.o, board.x, x_to_move)):
                        matching = find_set_matching(geometry, attacker, mine, defender_to_move=to_move)
                        if matching is None:
                            continue
                        assert holds(geometry, attacker, mine, matching, defender_to_move=to_move)
                        assert (mover_value if to_move else -mover_value) >= 0, (board, defender)
                        claimed += 1
                        set_blocks += any(block.answers for block in matching.blocks)
    assert positions_seen > 9_000 and claimed > 11_000 and set_blocks > 100, (positions_seen, claimed, set_blocks)


@pytest.mark.slow
def test_every_claim_deeper_meets_the_conditions_and_the_plain_solver_agrees() -> None:
    # 10–25 s: every 4×4 position of the first 3 plies, 4×5 of the first 2
    checked, set_blocks = check_claims(DEEP)
    assert checked > 600 and set_blocks > 300, (checked, set_blocks)


def test_claims_on_first_player_wins_are_only_where_the_first_player_has_already_spoilt_it() -> None:
    # 3×4 and 4×4 with three are first-player wins: never "O holds X" on the empty board
    for shape in ((3, 4, 3), (4, 4, 3)):
        board = Board(*shape)
        assert find_set_matching(board.geometry, board.x, board.o) is None


def test_the_empty_4x4_board_is_a_draw_by_one_matching_set_each_way() -> None:
    board = Board(4, 4, 4)
    found = draw_by_set_matching(board)
    assert found is not None
    against_x, against_o = found
    assert [len(block.answers) for block in against_x.blocks] == [16]  # every first move of X answered
    assert holds(board.geometry, board.x, board.o, against_x)
    assert holds(board.geometry, board.o, board.x, against_o, defender_to_move=True)
    assert solver.solve(board).value == 0
    # no pairing: 10 lines would need 20 of the 16 cells
    assert solver.pairing(board, "O") is None
    assert draw_by_set_matching(Board(3, 3, 3)) is None
    assert draw_by_set_matching(Board(4, 4, 3)) is None  # a first-player win


def test_holds_rejects_each_broken_condition() -> None:
    board = Board(4, 4, 4)
    geometry = board.geometry
    matching = find_set_matching(geometry, 0, 0)
    assert matching is not None
    (block,) = matching.blocks
    first, reply, pairs, _ = block.answers[0]
    broken = [
        # a first move left unanswered
        SetMatching(None, (block._replace(answers=block.answers[1:]),)),
        # a reply on the first move itself
        SetMatching(None, (block._replace(answers=(Answer(first, first, pairs), *block.answers[1:])),)),
        # a pair dropped: some line is left open
        SetMatching(None, (block._replace(answers=(Answer(first, reply, pairs[1:]), *block.answers[1:])),)),
        # a pair through the first move (the attacker's cell)
        SetMatching(None, (block._replace(answers=(Answer(first, reply, ((first, pairs[0][1]), *pairs[1:])),
                                                   *block.answers[1:])),)),
        # a line nobody answers for
        SetMatching(None, (block._replace(lines=block.lines[1:]),)),
        # an opening when the defender is not to move
        SetMatching(5, (block,)),
    ]
    assert holds(geometry, 0, 0, matching)
    for wrong in broken:
        assert not holds(geometry, 0, 0, wrong), wrong
    # a pairing block whose pairs miss a line, and one using a marked cell
    assert not holds(geometry, 0, 0, SetMatching(None, (Block(geometry.full, geometry.line_masks, ((0, 1),), ()),)))
    assert not holds(geometry, 1, 0, matching)


def test_a_defender_to_move_opens_where_it_must() -> None:
    board = Board.parse("XXX./O.../O.../....", 4)  # O to move must block at d1 first
    matching = find_set_matching(board.geometry, board.x, board.o, defender_to_move=True)
    assert matching is not None and matching.opening == 3
    assert holds(board.geometry, board.x, board.o, matching, defender_to_move=True)
    assert not holds(board.geometry, board.x, board.o, matching._replace(opening=7), defender_to_move=True)
    assert find_set_matching(board.geometry, board.x, board.o) is None  # X to move would win


def defender_never_loses(geometry: Geometry, matching: SetMatching, x: int = 0, o: int = 0) -> bool:
    """Play the strategy of the module's proof as O against every sequence of X's moves from the
    position (X to move, no opening): whether X never completes a line."""
    lines = geometry.line_masks
    full = geometry.full
    seen: set[tuple[int, int, frozenset[tuple[int, int]], frozenset[tuple[int, Block]]]] = set()

    def attack(x: int, o: int, partner: dict[int, int], waiting: dict[int, Block]) -> bool:
        """``partner``: the pairs in force; ``waiting``: each cell of a matching set not yet entered."""
        state = (x, o, frozenset(partner.items()), frozenset(waiting.items()))
        if state in seen:
            return True
        seen.add(state)
        if all(line & o for line in lines):
            return True  # every line has an O: nothing left to try
        empty = full & ~(x | o)
        while empty:
            bit = empty & -empty
            empty ^= bit
            cell = bit.bit_length() - 1
            after = x | bit
            if any(after & line == line for line in lines):
                return False
            answer_cell, now_partner, now_waiting = partner.get(cell, -1), partner, waiting
            block = waiting.get(cell)
            if block is not None:  # X's first cell in a matching set: its answer comes into force
                answer = next(a for a in block.answers if a.first == cell)
                answer_cell = answer.reply
                now_waiting = {c: b for c, b in waiting.items() if b is not block}
                now_partner = dict(partner)
                enter(answer.pairs, answer.blocks, now_partner, now_waiting)
            free = full & ~(after | o)
            if answer_cell < 0 or not free >> answer_cell & 1:
                if not free:
                    continue
                answer_cell = (free & -free).bit_length() - 1  # anywhere
            if not attack(after, o | 1 << answer_cell, now_partner, now_waiting):
                return False
        return True

    partner: dict[int, int] = {}
    waiting: dict[int, Block] = {}
    enter((), matching.blocks, partner, waiting)
    return attack(x, o, partner, waiting)


def enter(pairs: tuple[tuple[int, int], ...], blocks: tuple[Block, ...], partner: dict[int, int],
          waiting: dict[int, Block]) -> None:
    """Put ``pairs`` and the pairs of ``blocks`` in force, and their matching sets in waiting."""
    for block in blocks:
        pairs += block.pairs
        if block.answers:
            waiting.update(dict.fromkeys(_cells(block.cells), block))
    for a, b in pairs:
        partner[a], partner[b] = b, a


def _cells(mask: int) -> list[int]:
    return [cell for cell in range(mask.bit_length()) if mask >> cell & 1]


def broken_replies(matching: SetMatching) -> SetMatching:
    """The matching with every matching set's reply moved to the next cell of its block."""
    blocks = []
    for block in matching.blocks:
        cells = _cells(block.cells)
        moved = []
        for first, reply, pairs, nested in block.answers:
            others = [cell for cell in cells if cell != first]
            moved.append(Answer(first, others[(others.index(reply) + 1) % len(others)], pairs, nested))
        blocks.append(block._replace(answers=tuple(moved)))
    return matching._replace(blocks=tuple(blocks))


@pytest.mark.parametrize("position", ["..../..../....", "X.../..../..../...O", ".X../..../O.../...."])
def test_the_strategy_wins_no_line_for_the_attacker_in_any_game(position: str) -> None:
    # 3×4 with four: pairings only; 4×4 after X and O have moved: a matching set
    board = Board.parse(position, 4)
    geometry = board.geometry
    matching = find_set_matching(geometry, board.x, board.o)
    assert matching is not None
    assert defender_never_loses(geometry, matching, board.x, board.o)
    if any(block.answers for block in matching.blocks):  # a wrong reply is caught
        assert not defender_never_loses(geometry, broken_replies(matching), board.x, board.o)


@pytest.mark.slow
def test_the_strategy_wins_no_line_for_x_from_the_empty_4x4_board() -> None:
    geometry = Board(4, 4, 4).geometry  # about 2 s
    matching = find_set_matching(geometry, 0, 0)
    assert matching is not None
    assert defender_never_loses(geometry, matching)
    assert not defender_never_loses(geometry, broken_replies(matching))


def test_4x5_is_a_draw_by_nested_matching_sets() -> None:
    board = Board(4, 5, 4)  # the solver proves it a draw (docs/proofs.md); no pairing, no plain matching set
    geometry = board.geometry
    found = draw_by_set_matching(board)
    assert found is not None
    against_x, against_o = found
    assert holds(geometry, 0, 0, against_x)
    assert holds(geometry, 0, 0, against_o, defender_to_move=True)
    (block,) = against_x.blocks
    assert all(answer.blocks and not answer.pairs for answer in block.answers)  # every answer nests
    # a pair taken out of a nested set's first answer breaks it
    answer = block.answers[0]
    inner = next(b for b in answer.blocks if b.answers)
    first_inner = inner.answers[0]
    if first_inner.pairs:
        broken_inner = first_inner._replace(pairs=first_inner.pairs[1:])
    else:
        broken_inner = first_inner._replace(blocks=first_inner.blocks[1:])
    broken_block = inner._replace(answers=(broken_inner, *inner.answers[1:]))
    broken_answer = answer._replace(blocks=tuple(broken_block if b is inner else b for b in answer.blocks))
    broken = against_x._replace(blocks=(block._replace(answers=(broken_answer, *block.answers[1:])),))
    assert not holds(geometry, 0, 0, broken)


@pytest.mark.slow
def test_the_nested_strategy_wins_no_line_for_x_after_one_4x5_answer() -> None:
    geometry = Board(4, 5, 4).geometry  # about 4 s (every answer takes as long; all of them, and the
    matching = find_set_matching(geometry, 0, 0)  # whole game from the empty board, passed once: 64 s)
    assert matching is not None
    answer = matching.blocks[0].answers[0]
    inner = SetMatching(None, answer.blocks)
    x, o = 1 << answer.first, 1 << answer.reply
    assert defender_never_loses(geometry, inner, x, o)
    assert not defender_never_loses(geometry, broken_replies(inner), x, o)


def test_analyse_explain_shows_the_matching_sets_on_4x4(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["analyse", ".X../..../O.../....", "--k", "4", "--explain"]) == 0
    out = capsys.readouterr().out
    assert "O stops X by set matching" in out and "X stops O by set matching" in out
    # 14 first moves each way, each a 4×4 diagram with the first move (*) and the reply (#)
    assert out.count("*") == 2 * 14 + 2  # and one in each side's caption
    assert out.count("#") == 2 * 14 + 2
    assert "no pairing covers every line" not in out
