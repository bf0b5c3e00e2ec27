"""noughts.records: SGF and PGN-like records round-trip every stored game; bad records are clean errors."""

from __future__ import annotations

import io
import random
import re
import string
import tracemalloc
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from noughts import Board, Game, GameRecordError, NoughtsError, records
from noughts.cli import main
from noughts.records import (
    GameRecord,
    _read_text,
    _Text,
    import_records,
    read_pgn,
    read_record_file,
    read_records,
    read_sgf,
    to_pgn,
    to_sgf,
)
from noughts.store import Participant, StoredGame, open_store

PEOPLE = [Participant.human(n) for n in ("Ann", 'Bo "the" ]\\ [x] name', "Zoë 🎲", "tab\there", "new\nline",
                                         "\\", "]")]
COMPUTERS = [Participant.computer(n) for n in ("hard", "easy", "medium", "perfect", "arduino")]
SHAPES = [(3, 3, 3), (3, 3, 3), (1, 1, 1), (1, 6, 3), (4, 4, 4), (3, 5, 3), (7, 7, 5), (15, 15, 5), (26, 26, 5),
          (2, 2, 1), (6, 1, 2), (5, 3, 4)]


def random_game(rng: random.Random) -> Game:
    rows, cols, k = rng.choice(SHAPES)
    start = Board(rows, cols, k)
    if rng.random() < 0.2:  # some games start from a position, as `noughts play` never does but the API can
        for _ in range(rng.randrange(0, min(4, start.size))):
            start = start.play(rng.choice(start.legal_moves))
            if start.is_over:
                start = Board(rows, cols, k)
                break
    game = Game(start)
    while not game.board.is_over:
        game.play(rng.choice(game.board.legal_moves))
    return game


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with 40 games of many boards and players, some at the same second."""
    path = tmp_path_factory.mktemp("records") / "source.db"
    rng = random.Random(2024)
    when = datetime(2025, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)
    with open_store(path) as store:
        for number in range(40):
            x = rng.choice(PEOPLE + COMPUTERS)
            o = rng.choice(PEOPLE + COMPUTERS)
            store.record(random_game(rng), x, o, played_at=when + timedelta(minutes=number // 2, microseconds=number))
    return path


def stored(path: Path) -> list[StoredGame]:
    with open_store(path, read_only=True) as store:
        return list(reversed(store.games(limit=1000)))


def same_game(a: StoredGame, b: StoredGame) -> bool:
    return (a.x, a.o, a.board, a.record, a.result, a.first, a.played_at.replace(microsecond=0)) == \
           (b.x, b.o, b.board, b.record, b.result, b.first, b.played_at.replace(microsecond=0))


@pytest.mark.parametrize("fmt", ["sgf", "pgn"])
def test_every_stored_game_round_trips_through_export_and_import(
        source: Path, tmp_path: Path, fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
    exported = tmp_path / f"all.{fmt}"
    assert main(["export", "--all", "--db", str(source), "--out", str(exported)]) == 0
    text = exported.read_text(encoding="utf-8")
    assert text.startswith("(;FF[4]GM[4]" if fmt == "sgf" else '[Event "noughts game"]')
    fresh = tmp_path / "fresh.db"
    assert main(["import", str(exported), "--db", str(fresh)]) == 0
    assert capsys.readouterr().out == "imported 40 games.\n"
    before, after = stored(source), stored(fresh)
    assert len(after) == 40 and all(same_game(a, b) for a, b in zip(before, after, strict=True))
    with open_store(source, read_only=True) as one, open_store(fresh, read_only=True) as other:
        assert one.scores() == other.scores()  # the same games in the same order score the same
    again = tmp_path / f"again.{fmt}"
    assert main(["export", "--all", "--db", str(fresh), "--out", str(again)]) == 0
    assert again.read_text(encoding="utf-8") == text
    # importing again, or into the store it came from, adds nothing
    for target in (fresh, source):
        assert main(["import", str(exported), "--db", str(target)]) == 0
        assert capsys.readouterr().out == "imported 0 games; 40 games already in the store.\n"
    assert len(stored(source)) == len(stored(fresh)) == 40


def test_chosen_games_in_either_format_to_stdout(source: Path, capsys: pytest.CaptureFixture[str]) -> None:
    games = stored(source)
    assert main(["export", "3", "1", "--format", "sgf", "--db", str(source)]) == 0
    records = read_records(capsys.readouterr().out)
    assert records == [GameRecord.from_stored(games[2]), GameRecord.from_stored(games[0])]
    assert main(["export", "2", "--db", str(source)]) == 0  # PGN-like text by default
    assert read_pgn(capsys.readouterr().out) == [GameRecord.from_stored(games[1])]


def test_records_of_unfinished_and_resigned_games_round_trip_but_are_not_stored(tmp_path: Path) -> None:
    start = Board.parse("X../.../...")
    resigned = GameRecord(start, (4, 2), Participant.human("Ann"), Participant.computer("perfect"),
                          datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC), "O", (("Round", "4"), ("Event", "Club night")))
    unfinished = GameRecord(Board(15, 15), (112, 113), None, None, None, None)
    won = GameRecord.from_game(Game.replay(["a1", "b1", "a2", "b2", "a3"]), x=Participant.human("Cy"))
    records = [resigned, unfinished, won]
    assert not resigned.finished and not unfinished.finished and won.finished
    for text in (to_sgf(records), to_pgn(records)):
        back = read_records(text)
        expected = records if text.startswith("[") else [
            GameRecord(r.start, r.moves, r.x, r.o, r.played_at, r.result,
                       tuple(t for t in r.tags if t[0] in ("Event", "Site"))) for r in records]
        assert back == expected
    assert "\n1... b2 2. c1 0-1\n" in to_pgn([resigned]) and "RE[W+]AB[aa]PL[W]\n;W[bb];B[ca])" in to_sgf([resigned])
    with open_store(tmp_path / "s.db") as store:
        report = import_records(store, records)
        assert (len(report.added), report.already, report.unfinished) == (1, 0, 2)
        assert store.game(report.added[0]).o == Participant.human("O")  # a side with no name is called by its mark
        assert report.summary() == ("imported 1 game; 2 games not finished, left out "
                                    "(the store keeps finished games only)")


GOMOKU_VIEWER_SGF = """\
Exported by a Renju viewer; text before the first tree is ignored.
(;GM[4]FF[4]CA[UTF-8]AP[RenjuViewer:2.1]SZ[15]
RU[Gomoku]PB[Kim Seo-yeon]PW[Tanaka]BR[5d]WR[4d]DT[2019-03-02]EV[Spring Open]RE[B+5]
C[Round 3. Black
wins with an open four \\] then five.]
;B[hh]C[The centre, as always]
;W[hi];B[ig]
;W[jf]  ;B[ih]
;W[ii];B[gi];W[fj]C[defends];B[jg];W[kf];B[gg]LB[fg:A]
;W[fg];B[hg]
(;W[ie];B[kg]C[five in a row: g7 h7 i7 j7 k7])
(;W[kg]C[a variation: not read]))
"""


def test_a_file_written_by_a_gomoku_viewer_imports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (record,) = read_sgf(GOMOKU_VIEWER_SGF)
    assert (record.start.rows, record.start.cols, record.start.k) == (15, 15, 5)
    assert record.result == "X" and record.finished
    assert record.x == Participant.human("Kim Seo-yeon") and record.o == Participant.human("Tanaka")
    assert record.played_at == datetime(2019, 3, 2, tzinfo=UTC) and dict(record.tags) == {"Event": "Spring Open"}
    assert [record.start.cell_name(c) for c in record.board.winning_line] == ["g7", "h7", "i7", "j7", "k7"]
    path = tmp_path / "game.sgf"
    path.write_bytes(GOMOKU_VIEWER_SGF.encode("cp1252", errors="replace").replace(b"\n", b"\r\n"))
    assert main(["import", str(path), "--db", str(tmp_path / "s.db")]) == 0
    assert capsys.readouterr().out == "imported 1 game.\n"
    (game,) = stored(tmp_path / "s.db")
    assert game.record == "size=15x15 k=5: h8 h9 i7 j6 i8 i9 g9 f10 j7 k6 g7 f7 h7 i5 k7"
    assert game.x.name == "Kim Seo-yeon" and game.result == "X"


def test_a_record_without_a_time_is_imported_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "plain.pgn"
    path.write_text("1. b2 a1 2. c3 a3 3. a2 c1 4. c2 1-0\n\n1. a1 *\n", encoding="utf-8")
    for said in ("imported 1 game", "imported 0 games; 1 game already in the store"):
        assert main(["import", str(path), "--db", str(tmp_path / "s.db")]) == 0
        assert capsys.readouterr().out.startswith(said + "; 1 game not finished")
    (game,) = stored(tmp_path / "s.db")
    assert (game.x, game.o, game.result) == (Participant.human("X"), Participant.human("O"), "X")


def test_older_and_looser_sgf_is_read() -> None:
    # FF[3] allowed lower case in property names; no GM means the reader's own game; a rectangle of setup points
    (record,) = read_sgf("(;FF[3]SiZe[5:4]NK[3]AB[aa:ba]AW[ab][bb];PlaYer[B]B[cc])")
    assert str(record.start) == "XX.../OO.../...../....." and record.moves == (12,)
    assert (record.start.rows, record.start.cols) == (4, 5)
    (empty,) = read_sgf("(;)")
    assert (empty.start.rows, empty.start.cols, empty.start.k, empty.moves) == (15, 15, 5, ())


@pytest.mark.parametrize(("text", "message"), [
    ("(;GM[1]SZ[19];B[pd])", "GM[1] is not gomoku"),
    ("(;GM[4]SZ[3];B[dd])", "[dd] is off the 3×3 board"),
    ("(;GM[4]SZ[3];B[aa];W[aa])", "a1 is taken by X"),
    ("(;GM[4]SZ[3];B[aa];B[bb])", "move 2 is Black's, but it is White's turn"),
    ("(;GM[4]SZ[3];W[aa])", "move 1 is White's"),
    ("(;SZ[3];B[aa];W[ba];B[ab];W[bb];B[ac];W[cc])", "comes after the game is over"),
    ("(;SZ[3];B[])", "a pass"),
    ("(;SZ[3];B[tt])", "a pass"),
    ("(;SZ[3];B[aa]", "a ')' is missing"),
    ("(;SZ[3];B[aa", "a ']' is missing"),
    ("(;SZ[3]SZ[3])", "SZ twice"),
    ("(;SZ[30])", "1 to 26 rows"),
    ("(;SZ[x])", "whole number"),
    ("(;SZ[3]NK[4])", "between 1 and 3"),
    ("(;SZ[3]RE[W+];B[aa];W[ba];B[ab];W[bb];B[ac])", "says O won, but after its moves X has won"),
    ("(;SZ[3]RE[maybe])", "not a result"),
    ("(;SZ[3]AB[aa][bb])", "X has 2 marks and O has 0"),
    ("(;SZ[3]AB[aa]PL[B])", "PL[B]"),
    ("(;SZ[3];B[aa]AW[bb])", "set up in the middle"),
    ("(;SZ[3];B[aa]W[bb])", "both a Black and a White move"),
    ("(;SZ[3];B[aa][bb])", "one value"),
    ("(;SZ[3];B[aa:bb])", "names 4 cells"),
    ("(;SZ[3](;B[aa]);W[bb])", "after the variations"),
    ("(;SZ[3])x", "unexpected 'x'"),
    ("(;SZ[3]))", "closes no game tree"),
    ("(;SZ[3]PB[" + "a" * 101 + "])", "at most 100 characters"),
    ("no game here", "PGN line 1: cannot read 'no game here'"),
    ("  \n", "no game in the PGN text"),
    ("(;SZ[3])\n(;SZ[3]", "a ')' is missing"),
    ("1. a1 b1 2. d4", "move 3 (d4)"),
    ('[Result "1-0"]\n1. a1 b1 2. a2 b2 3. a3 0-1', "Result tag says 1-0 but the moves end with 0-1"),
    ('[Result "2-0"]\n*', "not a result"),
    ('[Board "3by3"]\n*', "is not a board"),
    ('[Board "30x3"]\n*', "1 to 26 rows"),
    ('[Board "4x4k3"][Start "X.O/.../..."]\n*', "the start position is 3×3"),
    ('[X "Ann"][X "Bo"]\n*', "the tag X is given twice"),
    ('[XType "robot"]\n*', "human or program"),
    ('[X "Ann"]\n1. a1 @ b2', "cannot read '@ b2'"),
    ("1. a1 (b1 2. c3", "inside a variation"),
    ("1. a1 ) b1", "closes no variation"),
])
def test_bad_records_are_one_clear_error(text: str, message: str) -> None:
    with pytest.raises(GameRecordError) as raised:
        read_records(text)
    assert message in str(raised.value)
    assert "Traceback" not in str(raised.value)


def test_pgn_reads_comments_nags_variations_and_numbered_cells() -> None:
    text = """% a line for other programs
[Event "Club night"]
[X "Ann"] [O "Bo"]
{a comment} 1. b2! $1 a1 ; to the end of the line
2. c3 (2. a3 b1) a3 3...  a2 1/2-1/2
"""
    with pytest.raises(GameRecordError, match="after its moves"):
        read_pgn(text.replace("3...  a2 ", "3. a2 c1 4. c2 "))  # X wins, the result says a draw
    (record,) = read_pgn(text)
    assert [record.start.cell_name(c) for c in record.moves] == ["b2", "a1", "c3", "a3", "a2"]
    assert record.result == "draw" and not record.finished and dict(record.tags) == {"Event": "Club night"}


@pytest.mark.parametrize("bad", [b"\xff\xfe(;SZ[3])", b"(;SZ[3]PB[\xe9l\xe8ve])", b"(;CA[ISO-8859-2]SZ[3]PB[\xb1])"])
def test_bytes_in_any_encoding_are_read(bad: bytes) -> None:
    try:
        records = read_records(bad)
    except GameRecordError:
        return
    assert records[0].start.rows == 3


def test_cli_errors_are_one_line(tmp_path: Path, source: Path, capsys: pytest.CaptureFixture[str]) -> None:
    garbage = tmp_path / "garbage.sgf"
    garbage.write_text("(;GM[4]SZ[3];B[zz])", encoding="utf-8")
    cases = [
        (["export", "--db", str(source)], "say which games to export"),
        (["export", "1", "--all", "--db", str(source)], "say which games to export"),
        (["export", "999", "--db", str(source)], "no game number 999"),
        (["export", "--all", "--db", str(source), "--out", str(tmp_path / "no" / "x.sgf")], "cannot write"),
        (["export", "--all", "--db", str(garbage)], "not a noughts database"),
        (["import", str(tmp_path / "missing.sgf"), "--db", str(tmp_path / "s.db")], "cannot read"),
        (["import", str(tmp_path), "--db", str(tmp_path / "s.db")], "cannot read"),
        (["import", str(garbage), "--db", str(tmp_path / "s.db")], "SGF game 1 (line 1): [zz] is off the 3×3 board"),
        (["import", str(source), "--db", str(tmp_path / "s.db")], "PGN line 1: cannot read"),
    ]
    for arguments, message in cases:
        assert main(arguments) == 2, arguments
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1 and err.startswith("noughts: "), (arguments, err)
    assert not (tmp_path / "s.db").exists()  # nothing was opened for a file that could not be read


# fuzzing: whatever the text, a list of records or a GameRecordError --------------------------------------

SAMPLE = to_sgf([GameRecord.from_game(Game.replay(["b2", "a1", "c3", "a3"]), x=Participant.human("A"))]) + \
    to_pgn([GameRecord.from_game(Game.replay(["b2", "a1", "c3"]))])


def read_or_refuse(text: str | bytes) -> None:
    try:
        records = read_records(text)
    except GameRecordError:
        return
    for record in records:  # whatever was read is a real game that writes and reads back the same
        assert read_records(to_pgn([record])) == [record]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=st.sampled_from(list("();[]\\:\n ")) | st.sampled_from(list(string.ascii_letters))
               | st.characters(), max_size=80))
def test_random_text_is_records_or_a_game_record_error(text: str) -> None:
    read_or_refuse(text)
    read_or_refuse("(" + text)
    read_or_refuse("[X \"a\"]\n" + text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, len(SAMPLE) - 1), st.integers(0, 8), st.text(max_size=4), st.binary(max_size=3))
def test_damaged_records_are_records_or_a_game_record_error(at: int, cut: int, insert: str, raw: bytes) -> None:
    read_or_refuse(SAMPLE[:at] + insert + SAMPLE[at + cut:])
    read_or_refuse(SAMPLE.encode("utf-8")[:at] + raw + SAMPLE.encode("utf-8")[at + cut:])


def test_a_record_refuses_what_no_game_can_hold() -> None:
    with pytest.raises(NoughtsError):
        GameRecord(Board(), (0, 0))
    with pytest.raises(GameRecordError, match="a result is"):
        GameRecord(Board(), (), result="X won")
    assert GameRecord(Board(), (4,)).key() == GameRecord(Board(), (4,)).key() != GameRecord(Board(), (5,)).key()


# hostile files: odd charsets, huge files, endless records -------------------------------------------------

def test_an_unknown_charset_is_a_sentence_naming_the_file_and_the_charset(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    odd = tmp_path / "odd.sgf"
    odd.write_bytes(b"(;GM[4]CA[undefined]SZ[3]PB[\xe9l\xe8ve];B[bb])")  # not UTF-8, in a charset no codec reads
    assert main(["import", str(odd), "--db", str(tmp_path / "s.db")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(odd) in err and "'undefined'" in err and "UTF-8" in err, err
    assert "internal error" not in err and "UnicodeError" not in err
    with pytest.raises(GameRecordError, match="charset 'x-made-up'"):
        read_records(b"(;CA[x-made-up]SZ[3]PB[\xe9])")
    with pytest.raises(GameRecordError, match="not text in the charset 'shift_jis'"):
        read_records(b"(;CA[shift_jis]SZ[3]PB[\x81\xff])")
    (record,) = read_records(b"(;CA[undefined]SZ[3]PB[Zo\xc3\xab])")  # UTF-8 is read as UTF-8, whatever CA says
    assert record.x == Participant.human("Zoë")
    (record,) = read_records(b"(;SZ[3]PB[Zo\xeb])")  # no CA: SGF's default, ISO-8859-1
    assert record.x == Participant.human("Zoë")


def huge_sgf(path: Path, moves: int) -> Path:
    """A single game of ``moves`` moves on 15×15 (each move is legal as far as any board allows)."""
    with path.open("w", encoding="ascii") as file:
        file.write("(;GM[4]FF[4]SZ[15]")
        batch = "".join(f";B[{chr(97 + i % 26)}{chr(97 + i // 26 % 26)}];W[aa]" for i in range(5000))
        for _ in range(moves // 10_000):
            file.write(batch)
        file.write(")\n")
    return path


def peak_bytes(read: Callable[[], object]) -> int:
    """The most memory Python held at once while ``read`` ran."""
    tracemalloc.start()
    try:
        read()
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak


def test_a_huge_record_is_refused_in_little_memory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = huge_sgf(tmp_path / "huge.sgf", 3_300_000)  # about 20 MB: before, 1.2 GB of nodes before a refusal
    assert 19_000_000 < path.stat().st_size < records.MAX_FILE_BYTES

    def read() -> None:
        refused = pytest.raises(GameRecordError, match=r"more moves than its board has cells \(225\)")
        with path.open("rb") as file, refused:
            list(read_record_file(file, "huge.sgf"))

    assert peak_bytes(read) < 4_000_000
    assert main(["import", str(path), "--db", str(tmp_path / "s.db")]) == 2
    err = capsys.readouterr().err
    assert "SGF game 1 (line 1) has more moves than its board has cells (225)" in err and err.count("\n") == 1
    assert not (tmp_path / "s.db").exists()


@pytest.mark.parametrize(("text", "message"), [
    ("(;SZ[3]C[" + "a" * 9_000_000 + "])", "SGF game 1 (line 1) is longer than 1,000,000 characters"),
    ("(;SZ[3]C[" + "\\]" * 5_000_000 + "])", "SGF game 1 (line 1) is longer than 1,000,000 characters"),
    ("(;SZ[3])\n(;SZ[3]" + ";C[x]" * 2_000_000 + ")", "SGF game 2 (line 2) is longer than 1,000,000 characters"),
    ("(;SZ[3]" + "(;B[aa])" * 1_200_000 + ")", "SGF game 1 (line 1) is longer than 1,000,000 characters"),
    ('[X "a"]\n{' + "a" * 9_000_000 + "}\n*", "PGN game 1 (line 1) is longer than 1,000,000 characters"),
    ('[Board "15x15"]\n' + "a1 b1 " * 1_500_000, "PGN game 1 (line 1) has more moves than its board has cells (225)"),
    ("1. a1 b1 " * 1_000_000, "PGN game 1 (line 1) has more moves than its board has cells (9)"),
])
def test_a_record_longer_than_any_game_is_refused_in_little_memory(text: str, message: str) -> None:
    data = text.encode()

    def read() -> None:
        with pytest.raises(GameRecordError, match=re.escape(message)):
            list(read_record_file(io.BytesIO(data)))

    assert len(data) > 8_000_000
    if ")" in text[:20] or ";C[x]" in text[:30]:
        read()  # a node at a time: as little memory as the others, only slower to measure
    else:
        assert peak_bytes(read) < 4_000_000  # the text is never held whole, nor the nodes of a record


def test_a_file_of_many_games_is_read_one_game_at_a_time(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    game = to_sgf([GameRecord.from_game(Game.replay(["b2", "a1", "c3", "a3", "a2", "c1", "c2"]))])
    data = (game * 4000).encode()  # 4,000 games, 240 kB
    counted = 0

    def read() -> None:
        nonlocal counted
        for record in read_record_file(io.BytesIO(data)):
            counted += record.finished

    assert peak_bytes(read) < 1_000_000 and counted == 4000  # the 4,000 records would take 2 MB
    path = tmp_path / "many.sgf"
    path.write_bytes(data[:len(game) * 50])
    assert main(["import", str(path), "--db", str(tmp_path / "s.db")]) == 0
    assert "imported 1 game; 49 games already in the store" in capsys.readouterr().out


def test_a_file_too_large_is_refused_with_its_name(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "big.pgn"
    path.write_bytes(b" " * (records.MAX_FILE_BYTES + 1))
    assert main(["import", str(path), "--db", str(tmp_path / "s.db")]) == 2
    assert f"{path} is larger than 20,000,000 bytes" in capsys.readouterr().err
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"1. b2 a1 " + b" " * records.MAX_FILE_BYTES)))
    assert main(["import", "-", "--db", str(tmp_path / "s.db")]) == 2
    assert "stdin is larger than 20,000,000 bytes" in capsys.readouterr().err
    assert not (tmp_path / "s.db").exists()


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=st.sampled_from(list("();[]\\:%\n\r AZbc12{}*-.\"")), max_size=60), st.integers(1, 7))
def test_text_read_in_pieces_reads_as_the_whole(text: str, size: int) -> None:
    """Where the pieces of a file are cut changes nothing: a record, or the same error."""
    def outcome(source: _Text) -> object:
        try:
            return list(_read_text(source))
        except GameRecordError as error:
            return str(error)

    pieces = _Text(iter([text[i:i + size] for i in range(0, len(text), size)]))
    assert outcome(pieces) == outcome(_Text(iter([text])))
    sample = SAMPLE[:len(text)] + text
    assert outcome(_Text(iter([sample[i:i + size] for i in range(0, len(sample), size)]))) == \
        outcome(_Text(iter([sample])))
