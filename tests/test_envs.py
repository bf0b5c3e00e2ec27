"""The environments of ``noughts.envs``, checked by each framework's own test suite.

PettingZoo: ``api_test`` (its default ``num_cycles=1000``; a game ends long before that, so it
plays one whole game), ``seed_test`` (default ``num_cycles=500``: again a whole game) and
``render_test`` (five renders in every mode), on 3×3, 4×4, 7×7 with five and 15×15 with five.
Gymnasium: ``check_env`` with its defaults, failing on any warning it raises. OpenSpiel:
``pyspiel.random_sim_test`` serialising every state, with 20 games on 3×3, 10 on 4×4, 3 on 7×7
with five and 1 on 15×15 with five (a 15×15 game is about 130 moves, each checked).

Beside them: the vectorised env against the AEC env move for move, the AEC env in columns
order against PettingZoo's ``tictactoe_v3``, the OpenSpiel game against OpenSpiel's own C++
``mnk``, symmetries against ``Board.symmetries``, and a short run of the training example.
"""

from __future__ import annotations

import importlib.util
import pickle
import random
import subprocess
import sys
import warnings
from pathlib import Path
from types import ModuleType
from typing import Any

import gymnasium
import numpy as np
import pettingzoo
import pyspiel
import pytest
from gymnasium.utils.env_checker import check_env
from open_spiel.python.algorithms import mcts
from open_spiel.python.bots.uniform_random import UniformRandomBot
from pettingzoo.test import api_test, render_test, seed_test

import noughts.envs
from noughts import Board, IllegalMoveError, UnsupportedBoardError, players, solver
from noughts.envs import mnk_v0
from noughts.envs.common import CellOrder, EnvDataError, EnvOptionError, legal_action_mask, observation_planes
from noughts.envs.openspiel import GAME_NAME, MnkState, NoughtsBot, board_of
from noughts.envs.render import HumanView, cell_pixels
from noughts.envs.symmetry import Symmetries
from noughts.envs.vector import BITBOARD_CELLS, VectorMnkEnv

SHAPES = [(3, 3, 3), (4, 4, 4), (7, 7, 5), (15, 15, 5)]
SHAPE_IDS = ["3x3", "4x4", "7x7k5", "15x15k5"]
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@pytest.fixture
def no_screen(monkeypatch: pytest.MonkeyPatch) -> None:
    """As on a server or in CI: no display for the human render mode to open a window on."""
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "SDL_VIDEODRIVER"):
        monkeypatch.delenv(name, raising=False)


# PettingZoo ------------------------------------------------------------------------------------

@pytest.mark.parametrize(("rows", "cols", "k"), SHAPES, ids=SHAPE_IDS)
def test_pettingzoo_own_tests_pass(rows: int, cols: int, k: int, no_screen: None) -> None:
    api_test(mnk_v0.env(rows, cols, k))
    api_test(mnk_v0.env(rows, cols, k, cell_order="columns"))
    seed_test(lambda: mnk_v0.env(rows, cols, k))

    def make(render_mode: str | None = None) -> Any:
        return mnk_v0.env(rows, cols, k, render_mode=render_mode)

    side = cell_pixels(Board(rows, cols, k))
    render_test(make, custom_tests={"ansi": lambda text: text.startswith("   a b"),
                                    "rgb_array": lambda image: image.shape == (rows * side + 1, cols * side + 1, 3)})


def test_the_aec_env_plays_a_game_with_rewards_at_the_end() -> None:
    env = mnk_v0.env()
    env.reset(seed=1)
    for cell in (0, 3, 1, 4):
        assert env.rewards == {"player_1": 0.0, "player_2": 0.0}
        env.step(cell)
    observation = env.observe("player_1")
    assert observation["observation"][..., 0].ravel().tolist() == [1, 1, 0, 0, 0, 0, 0, 0, 0]
    assert observation["observation"][..., 1].ravel().tolist() == [0, 0, 0, 1, 1, 0, 0, 0, 0]
    assert observation["observation"][..., 2].all()  # X to move
    assert env.observe("player_2")["action_mask"].sum() == 0  # not its turn
    env.step(2)  # X completes the top row
    assert env.terminations == {"player_1": True, "player_2": True}
    assert env.rewards == {"player_1": 1.0, "player_2": -1.0}
    assert env.observe("player_1")["action_mask"].sum() == 0  # the game is over
    _, reward, terminated, _, _ = env.last()
    assert (env.agent_selection, reward, terminated) == ("player_2", -1.0, True)


def test_an_illegal_action_loses_in_env_and_raises_in_raw_env(caplog: pytest.LogCaptureFixture) -> None:
    env = mnk_v0.env()
    env.reset()
    env.step(4)
    env.step(4)  # O plays the taken centre
    assert env.rewards == {"player_1": 0.0, "player_2": -1.0}
    assert all(env.terminations.values())
    assert "Illegal move made" in caplog.text  # PettingZoo's own warning, logged
    env.reset()
    with pytest.raises(AssertionError):
        env.step(9)  # off the board
    raw = mnk_v0.raw_env()
    raw.step(4)
    with pytest.raises(IllegalMoveError, match="b2 is taken by X"):
        raw.step(4)
    with pytest.raises(IllegalMoveError, match="actions run from 0 to 8"):
        raw.step(9)
    with pytest.raises(EnvOptionError, match="cell order"):
        mnk_v0.raw_env(cell_order="diagonal")
    with pytest.raises(UnsupportedBoardError):
        mnk_v0.raw_env(3, 3, 4)


def test_columns_order_sees_what_tictactoe_v3_sees() -> None:
    rng = np.random.default_rng(3)
    for _ in range(30):
        ours = pettingzoo.make("aec", noughts.envs.PETTINGZOO_ID, cell_order="columns")
        theirs = pettingzoo.make("aec", "classic/tictactoe-v3")
        ours.reset()
        theirs.reset()
        while True:
            mine, reward, done, _, _ = ours.last()
            other, their_reward, their_done, _, _ = theirs.last()
            assert (ours.agent_selection, reward, done) == (theirs.agent_selection, their_reward, their_done)
            if done:
                break
            assert np.array_equal(mine["observation"][..., :2], other["observation"])
            assert np.array_equal(mine["action_mask"], other["action_mask"])
            action = int(rng.choice(np.flatnonzero(mine["action_mask"])))
            ours.step(action)
            theirs.step(action)
        assert ours.rewards == theirs.rewards


def test_columns_order_numbers_cells_down_the_columns() -> None:
    env = mnk_v0.raw_env(2, 3, 2, cell_order="columns")
    env.step(1)  # column a, row 2
    assert str(env.board) == ".../X.."
    assert env.observe("player_1")["observation"].shape == (3, 2, 3)  # columns first
    assert env.observe("player_1")["observation"][0, 1, 0] == 1


def test_human_mode_without_a_screen_prints_the_board(no_screen: None, capsys: pytest.CaptureFixture[str]) -> None:
    env = mnk_v0.env(render_mode="human")
    env.reset()
    env.step(4)  # human mode shows every move
    assert env.render() is None
    printed = capsys.readouterr().out
    assert printed.count(" 2 . X .") == 2 and "O to move" in printed
    env.close()


def test_human_mode_opens_a_window_where_there_is_a_screen(monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")  # SDL's screen without a monitor
    view = HumanView()
    view.show(Board.parse("X../.O./..."))
    assert view.has_window
    surface = view._pygame.display.get_surface()
    assert surface.get_size() == (3 * 96 + 1, 3 * 96 + 1)
    assert surface.get_at((48, 48))[:3] != surface.get_at((48 + 96, 48))[:3]  # an X, then an empty cell
    view.close()
    assert not view.has_window and capsys.readouterr().out == ""


# Gymnasium -------------------------------------------------------------------------------------

@pytest.mark.parametrize("options", [
    {},
    {"agent_mark": "O"},
    {"rows": 4, "cols": 4, "k": 3, "opponent": "perfect", "agent_mark": "either"},
    {"rows": 7, "cols": 7, "k": 5, "opponent": "arduino", "cell_order": "columns"},
], ids=["X vs perfect", "O vs perfect", "4x4k3 either", "7x7k5 columns"])
def test_gymnasium_check_env_passes(options: dict[str, Any], no_screen: None) -> None:
    env = gymnasium.make(noughts.envs.GYMNASIUM_ID, **options)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env.unwrapped)
    assert [str(w.message) for w in caught] == []


def test_gymnasium_seed_replays_the_opponent() -> None:
    env = gymnasium.make(noughts.envs.GYMNASIUM_ID, opponent="random", agent_mark="either")

    def game(seed: int) -> list[Any]:
        observation, info = env.reset(seed=seed)
        moves: list[Any] = [info["agent_mark"]]
        while True:
            action = int(np.flatnonzero(observation["action_mask"])[0])
            observation, reward, terminated, _, info = env.step(action)
            moves.append(observation["observation"].tolist())
            if terminated:
                return [*moves, reward, info["winner"]]

    assert game(5) == game(5)
    assert len({str(game(seed)) for seed in range(8)}) > 1


def test_gymnasium_agent_never_beats_perfect_and_illegal_actions() -> None:
    env = gymnasium.make(noughts.envs.GYMNASIUM_ID, opponent="perfect", agent_mark="O")
    rng = np.random.default_rng(0)
    for seed in range(6):
        observation, _ = env.reset(seed=seed)
        assert observation["observation"][..., 1].sum() == 1  # X has opened
        terminated = False
        while not terminated:
            observation, reward, terminated, _, info = env.step(int(rng.choice(np.flatnonzero(
                observation["action_mask"]))))
        assert reward <= 0 and info["winner"] in ("X", None)
    observation, _ = env.reset(seed=0)
    taken = int(np.flatnonzero(observation["observation"][..., 1].ravel())[0])
    _, reward, terminated, _, info = env.step(taken)
    assert (reward, terminated, info["illegal"]) == (-1.0, True, True)
    with pytest.raises(IllegalMoveError, match="the game is over"):
        env.step(0)
    strict = gymnasium.make(noughts.envs.GYMNASIUM_ID, agent_mark="O", illegal_action="raise")
    observation, _ = strict.reset(seed=0)
    with pytest.raises(IllegalMoveError, match="is taken by"):
        strict.step(int(np.flatnonzero(observation["observation"][..., 1].ravel())[0]))
    with pytest.raises(UnsupportedBoardError, match="Perfect cannot play this board"):
        gymnasium.make(noughts.envs.GYMNASIUM_ID, rows=15, cols=15, k=5, opponent="perfect")
    with pytest.raises(EnvOptionError, match="illegal_action"):
        gymnasium.make(noughts.envs.GYMNASIUM_ID, illegal_action="ignore")


# OpenSpiel -------------------------------------------------------------------------------------

@pytest.mark.parametrize(("shape", "games"), [("", 20), ("(rows=4,cols=4,k=3)", 10), ("(rows=7,cols=7,k=5)", 3),
                                              ("(rows=15,cols=15,k=5)", 1)], ids=SHAPE_IDS)
def test_openspiel_random_sim_test_passes(shape: str, games: int) -> None:
    game = pyspiel.load_game(GAME_NAME + shape)
    pyspiel.random_sim_test(game, num_sims=games, serialize=True, verbose=False)


@pytest.mark.parametrize(("rows", "cols", "k"), [(3, 3, 3), (3, 4, 3), (4, 4, 3), (2, 5, 2)])
def test_openspiel_game_matches_openspiel_mnk(rows: int, cols: int, k: int) -> None:
    ours = pyspiel.load_game(f"{GAME_NAME}(rows={rows},cols={cols},k={k})")
    theirs = pyspiel.load_game("mnk", {"m": cols, "n": rows, "k": k})
    rng = np.random.default_rng(rows * 10 + cols)
    for _ in range(20):
        a, b = ours.new_initial_state(), theirs.new_initial_state()
        while True:
            for query in ("__str__", "is_terminal", "returns", "current_player"):
                assert getattr(a, query)() == getattr(b, query)(), query
            for player in (0, 1):
                assert a.observation_tensor(player) == b.observation_tensor(player)
                assert a.observation_string(player) == b.observation_string(player)
                assert a.information_state_string(player) == b.information_state_string(player)
            if a.is_terminal():
                break
            assert a.legal_actions() == b.legal_actions()
            action = int(rng.choice(a.legal_actions()))
            assert a.action_to_string(a.current_player(), action) == b.action_to_string(b.current_player(), action)
            a.apply_action(action)
            b.apply_action(action)


def test_openspiel_states_serialise_and_pickle() -> None:
    game = pyspiel.load_game(GAME_NAME, {"rows": 4, "cols": 3, "k": 3})
    state = game.new_initial_state()
    for action in (4, 0, 7):
        state.apply_action(action)
    text = pyspiel.serialize_game_and_state(game, state)
    same_game, same_state = pyspiel.deserialize_game_and_state(text)
    assert str(same_game) == str(game) and same_state.history() == [4, 0, 7]
    assert isinstance(same_state, MnkState) and same_state.board == state.board
    copied = pickle.loads(pickle.dumps(state))
    assert copied.board == state.board == Board.parse("O../.X./.X./...", k=3)
    with pytest.raises(UnsupportedBoardError):
        pyspiel.load_game(GAME_NAME, {"rows": 3, "cols": 3, "k": 4})


def test_openspiel_bot_plays_perfect_against_openspiel_algorithms() -> None:
    game = pyspiel.load_game(GAME_NAME)
    for seed in range(4):
        search = mcts.MCTSBot(game, uct_c=2, max_simulations=40, random_state=np.random.RandomState(seed),
                              evaluator=mcts.RandomRolloutEvaluator(1, np.random.RandomState(seed)))
        perfect = NoughtsBot("perfect", random.Random(seed))
        bots = [search, perfect] if seed % 2 else [perfect, search]
        returns = pyspiel.evaluate_bots(game.new_initial_state(), bots, seed)
        assert returns[bots.index(perfect)] >= 0  # perfect never loses
    wins = 0
    for seed in range(10):  # against random moves perfect wins most games, in OpenSpiel's own tic_tac_toe
        random_bot = UniformRandomBot(1, np.random.RandomState(seed))
        returns = pyspiel.evaluate_bots(pyspiel.load_game("tic_tac_toe").new_initial_state(),
                                        [NoughtsBot("perfect", random.Random(seed)), random_bot], seed)
        assert returns[0] >= 0
        wins += returns[0] == 1
    assert wins >= 7


def test_openspiel_board_of_reads_openspiel_games() -> None:
    state = pyspiel.load_game("mnk", {"m": 4, "n": 3, "k": 3}).new_initial_state()
    for action in (5, 0, 6):
        state.apply_action(action)
    assert board_of(state) == Board.parse("O.../.XX./....", k=3)
    with pytest.raises(UnsupportedBoardError, match="not connect_four"):
        NoughtsBot("random").step(pyspiel.load_game("connect_four").new_initial_state())


# The vectorised env ----------------------------------------------------------------------------

@pytest.mark.parametrize(("rows", "cols", "k", "order"), [
    (3, 3, 3, "rows"), (3, 3, 3, "columns"), (4, 4, 3, "rows"), (3, 5, 3, "columns"), (5, 5, 4, "rows"),
    (7, 7, 5, "columns"),
])
def test_vector_env_matches_the_aec_env_move_for_move(rows: int, cols: int, k: int, order: str) -> None:
    boards = 6
    vector = VectorMnkEnv(boards, rows, cols, k, cell_order=order)
    assert vector.bitboards == (rows * cols <= BITBOARD_CELLS)
    aec = [mnk_v0.raw_env(rows, cols, k, cell_order=order) for _ in range(boards)]
    observations, masks = vector.reset()
    rng = np.random.default_rng(rows * cols)
    finished = 0
    for _ in range(rows * cols * 3):  # about three games a board
        for i, env in enumerate(aec):
            seen = env.observe(env.agent_selection)
            assert np.array_equal(observations[i], seen["observation"])
            assert np.array_equal(masks[i], seen["action_mask"])
        actions = vector.random_actions(rng)
        step = vector.step(actions)
        for i, env in enumerate(aec):
            mover = env.agent_selection
            env.step(int(actions[i]))
            assert step.terminated[i] == env.terminations[mover]
            assert step.rewards[i] == env.rewards[mover] == -env.rewards[env.agent_selection]
            if step.terminated[i]:
                finished += 1
                final = env.observe(env.agent_selection)["observation"]
                assert np.array_equal(step.final_observations[i], final)
                assert step.winners[i] == {"X": 1, "O": -1, None: 0}[env.board.winner]
                env.reset()
        assert vector.positions() == [env.board for env in aec]
        observations, masks = step.observations, step.masks
    assert finished >= boards * 2


def test_vector_env_refuses_illegal_actions_and_moves_no_board() -> None:
    vector = VectorMnkEnv(3)
    vector.reset()
    vector.step(np.array([4, 4, 0]))
    with pytest.raises(IllegalMoveError, match="board 1: action 4 is not legal"):
        vector.step(np.array([0, 4, 1]))
    with pytest.raises(IllegalMoveError, match="board 2: there is no action 9"):
        vector.step(np.array([0, 1, 9]))
    with pytest.raises(IllegalMoveError, match="one whole-number action per board"):
        vector.step(np.array([0.0, 1.0, 2.0]))
    assert [str(b) for b in vector.positions()] == [".../.X./...", ".../.X./...", "X../.../..."]


# Symmetries ------------------------------------------------------------------------------------

def random_positions(rows: int, cols: int, k: int, count: int, seed: int) -> list[Board]:
    rng = random.Random(seed)
    found = []
    while len(found) < count:
        board = Board(rows, cols, k)
        for _ in range(rng.randrange(rows * cols)):
            if board.is_over:
                break
            board = board.play(rng.choice(board.legal_moves))
        found.append(board)
    return found


@pytest.mark.parametrize(("rows", "cols", "order", "count"), [
    (3, 3, "rows", 8), (3, 3, "columns", 8), (4, 4, "rows", 8), (3, 4, "rows", 4), (3, 4, "columns", 4),
    (2, 5, "columns", 4), (1, 4, "rows", 2),
])
def test_symmetries_map_observations_masks_and_actions_like_the_board(rows: int, cols: int, order: str,
                                                                       count: int) -> None:
    group = Symmetries(rows, cols, order)
    assert len(group) == count
    k = min(rows, cols, 3)
    for board in random_positions(rows, cols, k, 12, seed=rows * cols):
        cells = CellOrder(board, order)
        images = board.symmetries()
        observer = board.turn or "X"
        observations = group.observations(observation_planes(board, observer, cells))
        masks = group.masks(legal_action_mask(board, cells))
        for s, image in enumerate(images):
            assert np.array_equal(observations[s], observation_planes(image, observer, cells))
            assert np.array_equal(masks[s], legal_action_mask(image, cells))
        if board.is_over:
            continue
        for action in np.flatnonzero(legal_action_mask(board, cells)):
            mapped = group.actions(action)
            after = board.play(cells.cell(action))
            for s, image in enumerate(images):
                assert image.play(cells.cell(mapped[s])) == after.symmetries()[s]


def test_symmetries_permute_policy_targets_consistently() -> None:
    group = Symmetries(3, 3)
    for board in random_positions(3, 3, 3, 20, seed=7):
        if board.is_over:
            continue
        target = np.zeros(9)
        best = solver.best_moves(board)
        target[list(best)] = 1 / len(best)
        for image, policy in zip(board.symmetries(), group.policies(target), strict=True):
            assert set(np.flatnonzero(policy)) == set(solver.best_moves(image))
    observations = np.zeros((5, 3, 3, 3), dtype=np.int8)
    assert group.observations(observations).shape == (8, 5, 3, 3, 3)
    assert group.actions(np.array([[0, 4], [8, 2]])).shape == (8, 2, 2)
    with pytest.raises(EnvDataError, match="one entry per action"):
        group.policies(np.zeros(10))
    with pytest.raises(EnvDataError, match="actions are whole numbers"):
        group.actions(9)


# The training example --------------------------------------------------------------------------

def load_example(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_tabular_training_reaches_an_agent_that_never_loses() -> None:
    example = load_example("train_tabular")
    untrained = example.TabularAgent()
    assert not example.audit(untrained).never_loses  # the audit can fail
    result = example.train(seed=0, max_steps=2_000)
    assert result.audit.never_loses, result.audit.losing_lines[:3]
    assert result.audit.positions > 500
    assert example.audit(result.agent).never_loses  # audited again, from scratch
    assert example.against_perfect(result.agent, 10, seed=1)["lost"] == 0
    perfect = players.get("perfect", random.Random(2))
    board = Board()
    while not board.is_over:  # the agent also plays as any noughts player: choose(board)
        board = board.play(result.agent.choose(board) if board.turn == "O" else perfect.choose(board))
    assert board.winner is None


# Packaging -------------------------------------------------------------------------------------

def test_import_noughts_needs_no_framework() -> None:
    frameworks = ["numpy", "gymnasium", "pettingzoo", "pyspiel", "open_spiel"]
    code = ("import sys, noughts, noughts.players, noughts.board; "
            f"print([m for m in {frameworks!r} if m in sys.modules]); "
            "import noughts.envs; "
            "print([m for m in ['pyspiel', 'open_spiel', 'pygame'] if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split("\n")[:2] == ["[]", "[]"]
