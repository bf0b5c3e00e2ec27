// noughts in the browser: draws what the server sends and sends what the person does.
// The server decides everything (moves, turns, results); this page holds no authority.

const $ = (id) => document.getElementById(id);
const SIZE = 3;
const SEATS_KEY = "noughts.seats"; // room code -> seat token, so a reload keeps the seat
const NAME_KEY = "noughts.name";
const PLAIN_KEY = "noughts.plain"; // "1": marks without colour (the letters alone)

let ws = null;
let retry = 0; // reconnection attempts since the socket was last open
let lost = false; // the connection dropped: the next open resumes the seat and says so
let players = [];
let firstRules = [];
let me = { room: null, seat: null }; // which room this tab is in, and its seat (null: watching)
let state = null; // the last "state" message
let scores = null;
let focusIndex = 4; // the cell that takes Tab focus (roving tabindex)
let wantBoardFocus = false;

// ---- seat tokens (localStorage) ---------------------------------------------------------
function tokens() {
  try { return JSON.parse(localStorage.getItem(SEATS_KEY)) || {}; } catch { return {}; }
}
function saveToken(room, token) {
  const all = tokens();
  delete all[room];
  all[room] = token;
  const codes = Object.keys(all);
  for (const old of codes.slice(0, Math.max(0, codes.length - 30))) delete all[old]; // keep the newest 30
  localStorage.setItem(SEATS_KEY, JSON.stringify(all));
}
function forgetToken(room) {
  const all = tokens();
  delete all[room];
  localStorage.setItem(SEATS_KEY, JSON.stringify(all));
}

// ---- the connection ---------------------------------------------------------------------
function connect() {
  const scheme = location.protocol === "https:" ? "wss://" : "ws://";
  ws = new WebSocket(scheme + location.host + "/ws");
  ws.onopen = () => {
    retry = 0;
    const line = $("connection");
    line.classList.remove("lost");
    line.textContent = lost ? "Reconnected." : "";
    if (lost) setTimeout(() => { if (line.textContent === "Reconnected.") line.textContent = ""; }, 3000);
    lost = false;
    const code = me.room || roomFromPath();
    if (code) join(code); // with the seat's token: back in the same seat, whichever server process this is
  };
  ws.onmessage = (event) => {
    let message;
    try { message = JSON.parse(event.data); } catch { return; }
    (handlers[message.type] || (() => {}))(message);
  };
  ws.onclose = () => {
    ws = null;
    lost = true;
    // Back off, with a random spread: when a server process stops, its players do not all
    // come back in the same millisecond (the rooms are kept in Redis, or lost with one process).
    const wait = Math.min(5000, 300 * 2 ** retry++) * (0.5 + Math.random());
    const line = $("connection");
    line.textContent = "Connection lost. Reconnecting…";
    line.classList.add("lost");
    setTimeout(connect, wait);
  };
}

function send(message) {
  if (!ws || ws.readyState !== WebSocket.OPEN) {
    notice("Not connected to the server yet: trying again…");
    return false;
  }
  ws.send(JSON.stringify(message));
  return true;
}

function roomFromPath() {
  const match = location.pathname.match(/^\/r\/([A-Za-z0-9]{4,12})\/?$/);
  return match ? match[1].toUpperCase() : null;
}

function join(code) {
  const token = tokens()[code];
  const message = { type: "join", room: code, name: myName() };
  if (token) message.token = token;
  send(message);
}

function myName() {
  const name = $("name").value.trim();
  return name || undefined;
}

// ---- messages from the server -----------------------------------------------------------
const handlers = {
  welcome(message) {
    players = message.players;
    firstRules = message.first || [];
    const select = $("opponent");
    const chosen = select.dataset.chosen || message.default_opponent;
    select.replaceChildren(...players.map((p) => {
      const option = document.createElement("option");
      option.value = p.name;
      option.textContent = p.label;
      return option;
    }));
    select.value = players.some((p) => p.name === chosen) ? chosen : message.default_opponent;
    describeOpponent();
    describeFirst();
  },
  joined(message) {
    me = { room: message.room, seat: message.seat };
    if (message.token) saveToken(message.room, message.token);
    if (location.pathname !== message.link) history.pushState(null, "", message.link);
    notice("");
    $("saved").textContent = "";
    if (wantBoardFocus) {
      wantBoardFocus = false;
      setTimeout(() => focusCell(focusIndex), 0);
    }
  },
  state(message) {
    if (message.room !== me.room) return;
    const before = state;
    state = message;
    render(before);
  },
  error(message) {
    if (message.re === "join" && (message.code === "bad_token" || message.code === "no_room")) {
      const code = me.room || roomFromPath();
      if (message.code === "bad_token" && code) { // a seat this browser no longer holds: watch instead
        forgetToken(code);
        join(code);
        return;
      }
      leaveRoom(false);
    }
    notice(message.message);
  },
  recorded(message) {
    $("saved").textContent = message.summary || message.message || "";
  },
  scores(message) {
    scores = message;
    renderScores();
  },
  closed(message) {
    leaveRoom(false);
    notice(message.message);
  },
  left() {},
  pong() {},
};

// ---- drawing ----------------------------------------------------------------------------
function buildBoard() {
  const board = $("board");
  for (let row = 0; row < SIZE; row++) {
    const line = document.createElement("div");
    line.setAttribute("role", "row");
    for (let col = 0; col < SIZE; col++) {
      const index = row * SIZE + col;
      const holder = document.createElement("div");
      holder.setAttribute("role", "gridcell");
      const button = document.createElement("button");
      button.type = "button";
      button.className = "cell";
      button.dataset.index = index;
      button.tabIndex = index === focusIndex ? 0 : -1;
      button.innerHTML = '<span class="mark" aria-hidden="true"></span>';
      button.addEventListener("click", () => play(index));
      button.addEventListener("keydown", (event) => onCellKey(event, index));
      button.addEventListener("focus", () => setFocusIndex(index));
      holder.append(button);
      line.append(holder);
    }
    board.append(line);
  }
  renderCells(Array(SIZE * SIZE).fill(null), null);
}

const cellButtons = () => [...document.querySelectorAll("#board .cell")];
const where = (index) => `row ${Math.floor(index / SIZE) + 1}, column ${(index % SIZE) + 1}`;

function renderCells(cells, line) {
  const winning = new Set(line || []);
  cellButtons().forEach((button, index) => {
    const mark = cells[index];
    button.querySelector(".mark").textContent = mark || "";
    button.dataset.mark = mark || "";
    button.classList.toggle("won", winning.has(index));
    // taken or finished: said to screen readers, yet still clickable, so the server can say why not
    button.setAttribute("aria-disabled", String(Boolean(mark) || Boolean(state && state.result)));
    let label = `${where(index)}, ${mark || "empty"}`;
    if (winning.has(index)) label += ", winning line";
    button.setAttribute("aria-label", label);
  });
}

// the name people see: a person's own, a computer player's label ("Centre first")
function shown(seat) {
  return seat ? seat.label || seat.name : "";
}

function label(name) {
  const player = players.find((p) => p.name === name);
  return player ? player.label : name;
}

function seatName(seat, number) {
  if (!seat) return "your friend";
  if (number === me.seat) return "you";
  return seat.kind === "computer" ? `the computer (${shown(seat)})` : seat.name;
}

function render(before) {
  const seats = state.seats;
  const friend = state.kind === "friend";
  renderCells(state.cells, state.line);
  drawStrike(state.line);

  const title = seats.map((s, n) => s ? `${n === me.seat ? "You" : shown(s)} (${s.mark})` : "waiting for a friend");
  $("game-heading").textContent = me.seat === 1 ? `${title[1]} against ${title[0]}` : `${title[0]} against ${title[1]}`;

  $("status").textContent = statusText(before);
  if (!before || before.game !== state.game || before.moves.length < state.moves.length) notice("");
  if (before && before.game !== state.game) $("saved").textContent = "";

  $("rematch").hidden = !(state.result && me.seat !== null);
  $("new-game").hidden = false;

  // the room panel: the code and link for friends, and who sits where
  $("room").hidden = !friend && me.seat !== null;
  $("room-code").textContent = state.room;
  const link = `${location.origin}/r/${state.room}`;
  $("room-link").href = link;
  $("room-link").textContent = link;
  $("invite").textContent = seats[1] || !friend
    ? "Anyone who opens this link can watch:"
    : "Send this link to a friend; whoever opens it first takes the other seat:";
  $("watching").hidden = me.seat !== null;
  $("seats").replaceChildren(...seats.map((seat, n) => {
    const item = document.createElement("li");
    if (!seat) {
      const other = seats[1 - n];
      item.textContent = `${other && other.mark === "X" ? "O" : "X"}: waiting for a friend to open the link…`;
    } else {
      const away = seat.connected ? "" : " (away)";
      item.textContent = `${seat.mark}: ${shown(seat)}${n === me.seat ? " (you)" : ""}${away}`;
    }
    return item;
  }));
  if (state.watchers) {
    const item = document.createElement("li");
    item.textContent = `${state.watchers} watching`;
    $("seats").append(item);
  }

  // this room's tally, as the match says it: "Ann: 2 · Bo: 1 · draws: 0"
  // (a line breaks between the parts, never between a name's colon and its number)
  $("tally").textContent = state.tally_text.split(" · ").map((part) => part.replace(/: (\d+)$/, ":\u00a0$1")).join(" · ");
  renderScores();
}

function statusText(before) {
  const seats = state.seats;
  if (state.result) return state.result_text[me.seat === null ? 2 : me.seat]; // the match's sentence
  const turnSeat = seats.findIndex((s) => s && s.mark === state.turn);
  const toMove = turnSeat >= 0 ? turnSeat : seats.findIndex((s) => !s);
  let last = "";
  const fresh = !before || before.game !== state.game || state.moves.length > before.moves.length;
  if (state.moves.length && fresh) {
    const cell = state.moves[state.moves.length - 1];
    const mover = state.cells[cell];
    const moverSeat = seats.findIndex((s) => s && s.mark === mover);
    if (moverSeat !== me.seat) last = `${capital(seatName(seats[moverSeat], moverSeat))} played ${where(cell)}. `;
  }
  if (me.seat === null) return `${last}Watching: ${seats[toMove] ? shown(seats[toMove]) : "a friend"} (${state.turn}) to move.`;
  if (toMove === me.seat) {
    const alone = state.kind === "friend" && !seats[1 - me.seat];
    return `${last}Your turn: you play ${state.turn}.${alone ? " Your friend has not joined yet: send them the link below." : ""}`;
  }
  const other = seats[toMove];
  if (!other) return `${last}Waiting for your friend to join: send them the link. They play ${state.turn}.`;
  if (other.kind === "computer") return `${last}The computer is thinking…`;
  return `${last}${other.name}'s turn (${state.turn}).${other.connected ? "" : " They are away for now."}`;
}

const capital = (text) => text.charAt(0).toUpperCase() + text.slice(1);

function drawStrike(line) {
  const svg = $("strike");
  const stroke = svg.querySelector("line");
  if (!line) {
    svg.classList.remove("shown");
    return;
  }
  const box = svg.getBoundingClientRect();
  const buttons = cellButtons();
  const centre = (index) => {
    const r = buttons[index].getBoundingClientRect();
    return [r.left + r.width / 2 - box.left, r.top + r.height / 2 - box.top, r.width];
  };
  const [x1, y1, width] = centre(line[0]);
  const [x2, y2] = centre(line[line.length - 1]);
  const length = Math.hypot(x2 - x1, y2 - y1) || 1;
  const reach = width * 0.38; // run a little past the outer marks
  const dx = ((x2 - x1) / length) * reach, dy = ((y2 - y1) / length) * reach;
  svg.setAttribute("viewBox", `0 0 ${box.width} ${box.height}`);
  stroke.setAttribute("x1", x1 - dx); stroke.setAttribute("y1", y1 - dy);
  stroke.setAttribute("x2", x2 + dx); stroke.setAttribute("y2", y2 + dy);
  svg.classList.add("shown");
}

function renderScores() {
  if (!scores) return;
  for (const level of ["easy", "medium", "hard"]) $(`high-${level}`).textContent = scores.high[level];
  $("run").textContent = scores.run;
  let text = scores.enabled ? "" : "Scores and history are off on this server.";
  if (scores.enabled && state && state.kind === "friend") { // two-person games are kept by name
    const mine = me.seat === null ? null : state.seats[me.seat];
    const tally = mine && scores.people.find((p) => p.name === mine.name);
    if (tally) text = `${tally.name} against friends, all time: ${tally.wins} won, ${tally.losses} lost, ${tally.draws} drawn.`;
  } else if (scores.enabled) {
    const opponent = state ? state.seats.find((s) => s && s.kind === "computer") : null;
    const name = opponent ? opponent.name : $("opponent").value;
    const tally = scores.opponents[name];
    if (tally) text = `You against ${label(name)}, all time: ${tally.wins} won, ${tally.losses} lost, ${tally.draws} drawn.`;
  }
  $("versus").textContent = text;
}

function notice(text) {
  $("notice").textContent = text;
}

function describeOpponent() {
  const chosen = players.find((p) => p.name === $("opponent").value);
  $("opponent-about").textContent = chosen ? chosen.description : "";
  renderScores();
}

function describeFirst() {
  const chosen = firstRules.find((r) => r.name === $("first").value);
  $("first-about").textContent = chosen ? capital(chosen.description) + "." : "";
}

function plainMarks(on) {
  document.documentElement.classList.toggle("plain", on);
  if (on) localStorage.setItem(PLAIN_KEY, "1"); else localStorage.removeItem(PLAIN_KEY);
}

// ---- playing ----------------------------------------------------------------------------
function play(index) {
  if (!me.room) {
    notice("Start a game first: choose an opponent, or play a friend.");
    return;
  }
  const message = { type: "move", cell: index };
  if (state) message.game = state.game;
  send(message); // the server checks it: a wrong move comes back as an error to show
}

function setFocusIndex(index) {
  focusIndex = index;
  cellButtons().forEach((button, n) => { button.tabIndex = n === index ? 0 : -1; });
}

function focusCell(index) {
  setFocusIndex(index);
  cellButtons()[index].focus();
}

function onCellKey(event, index) {
  const row = Math.floor(index / SIZE), col = index % SIZE;
  const moves = {
    ArrowUp: [Math.max(0, row - 1), col], ArrowDown: [Math.min(SIZE - 1, row + 1), col],
    ArrowLeft: [row, Math.max(0, col - 1)], ArrowRight: [row, Math.min(SIZE - 1, col + 1)],
    Home: event.ctrlKey ? [0, 0] : [row, 0], End: event.ctrlKey ? [SIZE - 1, SIZE - 1] : [row, SIZE - 1],
  };
  const target = moves[event.key];
  if (!target) return; // Enter and Space reach the button's own click
  event.preventDefault();
  focusCell(target[0] * SIZE + target[1]);
}

function leaveRoom(tellServer = true) {
  if (tellServer && me.room) send({ type: "leave" });
  me = { room: null, seat: null };
  state = null;
  if (location.pathname !== "/") history.pushState(null, "", "/");
  renderCells(Array(SIZE * SIZE).fill(null), null);
  drawStrike(null);
  $("game-heading").textContent = "Noughts and crosses";
  $("status").textContent = "Choose an opponent to start.";
  $("rematch").hidden = $("new-game").hidden = true;
  $("room").hidden = true;
  $("tally").textContent = $("saved").textContent = "";
  renderScores();
}

function first() {
  return $("first").value;
}

function rememberName() {
  const name = $("name").value.trim();
  if (name) localStorage.setItem(NAME_KEY, name); else localStorage.removeItem(NAME_KEY);
}

function start(message) {
  rememberName();
  wantBoardFocus = true;
  focusIndex = 4;
  if (!send({ ...message, first: first(), name: myName() })) wantBoardFocus = false;
}

// ---- wiring -----------------------------------------------------------------------------
function init() {
  buildBoard();
  $("name").value = localStorage.getItem(NAME_KEY) || "";
  $("opponent").addEventListener("change", () => { $("opponent").dataset.chosen = $("opponent").value; describeOpponent(); });
  $("first").addEventListener("change", describeFirst);
  $("plain").checked = localStorage.getItem(PLAIN_KEY) === "1";
  plainMarks($("plain").checked);
  $("plain").addEventListener("change", () => plainMarks($("plain").checked));
  $("computer-form").addEventListener("submit", (event) => {
    event.preventDefault();
    start({ type: "play_computer", opponent: $("opponent").value });
  });
  $("friend").addEventListener("click", () => start({ type: "create_room" }));
  $("join-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const code = $("code").value.trim().toUpperCase();
    if (!code) { notice("Type the code your friend sent, like K7M2QX."); return; }
    rememberName();
    wantBoardFocus = true;
    join(code);
  });
  $("rematch").addEventListener("click", () => { wantBoardFocus = true; send({ type: "rematch" }); });
  $("new-game").addEventListener("click", () => { leaveRoom(); $("opponent").focus(); });
  $("copy").addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText($("room-link").href);
      $("saved").textContent = "Link copied.";
    } catch {
      $("saved").textContent = "Copy the link by hand: the browser did not allow it.";
    }
  });
  window.addEventListener("popstate", () => {
    const code = roomFromPath();
    if (code) join(code); else leaveRoom();
  });
  window.addEventListener("resize", () => drawStrike(state && state.line));
  connect();
}

// A handle for the browser console (and the tests): anything sent is checked by the server.
window.noughts = { send, get state() { return state; }, get seat() { return me.seat; } };

init();
