// noughts in the browser: draws what the server sends and sends what the person does.
// The server decides everything (moves, turns, results); this page holds no authority.
// Every request carries an id that names what the person meant ("move 7 of game 2 at ply 4"),
// so a double click or a second press sends the same id and the server answers it once.

const $ = (id) => document.getElementById(id);
const SEATS_KEY = "noughts.seats"; // room code -> seat token, so a reload keeps the seat
const NAME_KEY = "noughts.name";
const PLAIN_KEY = "noughts.plain"; // "1": marks without colour (the letters alone)
const BOARD_KEY = "noughts.board"; // "rows,cols,k": the board chosen last
const MAX_SIDE = 15;

let ws = null;
let retry = 0; // reconnection attempts since the socket was last open
let lost = false; // the connection dropped: the next open resumes the seat and says so
let reopen = null; // the timer that opens a new socket after one closed for idleness
const queued = []; // asked while a socket is being opened (not lost): sent when it opens
let players = []; // every computer player (welcome), by name, label and description
let able = null; // the names that can play the chosen board (null: being worked out)
let firstRules = [];
let me = { room: null, seat: null }; // which room this tab is in, and its seat (null: watching)
let state = null; // the last "state" message
let scores = null;
let shape = { rows: 3, cols: 3 }; // the board drawn now
let focusIndex = 4; // the cell that takes Tab focus (roving tabindex)
let wantBoardFocus = false;
let share = null; // the room's link for a friend: { url, reach }
let hintFor = null; // { cell, game, ply }: the hint shown, until the board moves on
let counter = 0; // numbers the requests that are not tied to a board (new games, joins)
const pending = {}; // what -> id of a request not yet answered: a second press resends the same id
let recent = null; // { what, id, at }: the last press; the same press next, within REPEAT_MS, is the same request
const REPEAT_MS = 1500; // a double click or a key pressed twice, even when the answer came in between
let shapeAsked = null; // the id of the last "players" question

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
    const asked = new Set(queued.map((message) => message.id));
    for (const [what, id] of Object.entries(pending)) if (!asked.has(id)) delete pending[what]; // a new connection remembers no ids
    const line = $("connection");
    line.classList.remove("lost");
    line.textContent = lost ? "Reconnected." : "";
    if (lost) setTimeout(() => { if (line.textContent === "Reconnected.") line.textContent = ""; }, 3000);
    lost = false;
    askPlayers();
    const code = me.room || roomFromPath();
    if (code) enter(code); // with the seat's token: back in the same seat, whichever server process this is
    for (const message of queued.splice(0)) ws.send(JSON.stringify(message));
  };
  ws.onmessage = (event) => {
    let message;
    try { message = JSON.parse(event.data); } catch { return; }
    if (message.id) {
      for (const [what, id] of Object.entries(pending)) if (id === message.id) delete pending[what];
      // a refused press pressed again is asked again (the board may have changed), not answered from memory
      if (message.type === "error" && recent && recent.id === message.id) recent = null;
    }
    (handlers[message.type] || (() => {}))(message);
  };
  ws.onclose = (event) => {
    ws = null;
    if (event.code === 1001 && !me.room) {
      // The server closes a socket that has sat on the start screen saying nothing for a while:
      // a normal end, not a lost connection. A new one is opened quietly.
      reopen = setTimeout(connect, 1000 * (0.5 + Math.random()));
      return;
    }
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
  if (!lost && (!ws || ws.readyState === WebSocket.CONNECTING)) {
    // the first socket, or the one after an idle one, is still opening: it takes this when it opens
    queued.push(message);
    if (!ws) {
      clearTimeout(reopen);
      connect();
    }
    return true;
  }
  if (!ws || ws.readyState !== WebSocket.OPEN) {
    notice("Not connected to the server yet: trying again…");
    return false;
  }
  ws.send(JSON.stringify(message));
  return true;
}

// A request that is not tied to the board (a new game, a join): pressed again before it is
// answered, it goes again with the same id, and the server answers it once.
function request(what, message) {
  if (!pending[what]) pending[what] = sameAsBefore(what, `${what}.${++counter}`);
  return send({ ...message, id: pending[what] });
}

// The id of a press: `fresh`, or the id of the same press made a moment ago (the second click of
// a double click may come after the first one's answer, and must not be a second request).
function sameAsBefore(what, fresh) {
  const now = performance.now();
  if (recent && recent.what === what && now - recent.at < REPEAT_MS) {
    recent.at = now;
    return recent.id;
  }
  recent = { what, id: fresh, at: now };
  return fresh;
}

function roomFromPath() {
  const match = location.pathname.match(/^\/r\/([A-Za-z0-9-]{4,16})\/?$/);
  return match ? normalCode(match[1]) : null;
}

// A room code is 12 symbols of Crockford's base 32, shown in groups of four (K7M2-QXAB-9CDE).
// Read as the server reads it: case, spaces and dashes do not matter, O is 0, I and L are 1.
function normalCode(text) {
  return text.toUpperCase().replace(/[\s-]/g, "").replace(/O/g, "0").replace(/[IL]/g, "1");
}
function shownCode(code) {
  return code.length === 12 ? code.match(/.{4}/g).join("-") : code;
}

// Into room `code`: with this browser's seat token, or with a name (asked first if none is known).
function enter(code) {
  const token = tokens()[code];
  if (!token && !savedName() && me.room !== code) {
    askName(code);
    return;
  }
  join(code);
}

function join(code) {
  const token = tokens()[code];
  const message = { type: "join", room: code, name: myName() };
  if (token) message.token = token;
  $("ask-name").hidden = true;
  request(`join-${code}`, message);
}

function askName(code) {
  $("ask-code").textContent = shownCode(code);
  $("ask-name").hidden = false;
  $("ask-input").value = $("name").value.trim();
  $("status").textContent = `You are invited to game ${shownCode(code)}: say your name to join.`;
  setTimeout(() => $("ask-input").focus(), 0);
}

function savedName() {
  return localStorage.getItem(NAME_KEY) || "";
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
    $("opponent").dataset.fallback = message.default_opponent;
    if (!$("opponent").dataset.chosen) $("opponent").dataset.chosen = message.default_opponent;
    offerOpponents();
    describeFirst();
  },
  players(message) {
    if (message.id !== shapeAsked) return; // an answer about a board chosen before
    able = message.able;
    // one sentence per reason: "Medium, Hard, Perfect: each works out every move exactly, and …"
    const byReason = new Map();
    for (const [name, why] of Object.entries(message.unable)) {
      byReason.set(why, [...(byReason.get(why) || []), label(name)]);
    }
    const parts = [...byReason].map(([why, names]) => `${names.join(", ")}: ${why.replace(/^it /, "each ")}.`);
    $("opponent-unable").textContent = parts.length ? `Not for this board: ${parts.join(" ")}` : "";
    offerOpponents();
  },
  joined(message) {
    me = { room: message.room, seat: message.seat };
    share = { url: message.url || `${location.origin}${message.link}`, reach: message.reach || "network" };
    if (message.token) saveToken(message.room, message.token);
    if (location.pathname !== message.link) history.pushState(null, "", message.link);
    $("ask-name").hidden = true;
    notice("");
    news("");
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
  undone(message) {
    news(message.message);
  },
  hint(message) {
    if (!state || message.game !== state.game || message.ply !== state.moves.length) return; // the board moved on
    hintFor = message.cell === null ? null : { cell: message.cell, game: message.game, ply: message.ply };
    news(message.message);
    renderCells(state.cells, state.line);
    if (hintFor) focusCell(hintFor.cell);
  },
  error(message) {
    if (message.re === "join" && (message.code === "bad_token" || message.code === "no_room")) {
      const code = me.room || roomFromPath();
      if (message.code === "bad_token" && code) { // a seat this browser no longer holds: watch instead
        forgetToken(code);
        enter(code);
        return;
      }
      leaveRoom(false);
    }
    if (outdated(message)) return; // about a board the person no longer sees: nothing to say
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
  done() {},
  left() {},
  pong() {},
};

// A refusal of a move, undo or hint sent for a board that has changed since (its id names the
// game and ply it was meant for): the person already sees the new board, so it is not shown.
function outdated(message) {
  const about = /^[muh]\.(\d+)\.(\d+)/.exec(message.id || "");
  if (!about || !state) return false;
  return Number(about[1]) !== state.game || Number(about[2]) !== state.moves.length;
}

// ---- the board ----------------------------------------------------------------------------
const letter = (col) => String.fromCharCode(97 + col);
const cellName = (index) => `${letter(index % shape.cols)}${Math.floor(index / shape.cols) + 1}`;
const where = (index) => `row ${Math.floor(index / shape.cols) + 1}, column ${(index % shape.cols) + 1}`;
const cellButtons = () => [...document.querySelectorAll("#board .cell")];

function buildBoard(rows, cols) {
  shape = { rows, cols };
  const board = $("board");
  const frame = board.closest(".board-frame");
  // the sizes go through the CSSOM (allowed by the page's Content-Security-Policy, unlike style attributes)
  frame.style.setProperty("--rows", rows);
  frame.style.setProperty("--cols", cols);
  frame.classList.toggle("big", Math.max(rows, cols) > 5);
  frame.classList.toggle("huge", Math.max(rows, cols) > 9);
  board.setAttribute("aria-label", `Board, ${rows} rows by ${cols} columns`);
  $("coords-cols").replaceChildren(...Array.from({ length: cols }, (_, c) => span(letter(c))));
  $("coords-rows").replaceChildren(...Array.from({ length: rows }, (_, r) => span(String(r + 1))));
  focusIndex = Math.floor(rows / 2) * cols + Math.floor(cols / 2);
  const lines = [];
  for (let row = 0; row < rows; row++) {
    const line = document.createElement("div");
    line.setAttribute("role", "row");
    for (let col = 0; col < cols; col++) {
      const index = row * cols + col;
      const holder = document.createElement("div");
      holder.setAttribute("role", "gridcell");
      const button = document.createElement("button");
      button.type = "button";
      button.className = "cell";
      button.dataset.index = index;
      button.tabIndex = index === focusIndex ? 0 : -1;
      const mark = document.createElement("span");
      mark.className = "mark";
      mark.setAttribute("aria-hidden", "true");
      button.append(mark);
      holder.append(button);
      line.append(holder);
    }
    lines.push(line);
  }
  board.replaceChildren(...lines);
  renderCells(Array(rows * cols).fill(null), null);
}

function span(text) {
  const item = document.createElement("span");
  item.textContent = text;
  return item;
}

function renderCells(cells, line) {
  const winning = new Set(line || []);
  const last = state && state.moves.length ? state.moves[state.moves.length - 1] : null;
  const hinted = hintFor && state && hintFor.game === state.game && hintFor.ply === state.moves.length
    ? hintFor.cell : null;
  cellButtons().forEach((button, index) => {
    const mark = cells[index];
    button.firstChild.textContent = mark || "";
    button.dataset.mark = mark || "";
    button.classList.toggle("won", winning.has(index));
    button.classList.toggle("last", index === last && !winning.has(index));
    button.classList.toggle("hinted", index === hinted);
    // taken or finished: said to screen readers, yet still clickable, so the server can say why not
    button.setAttribute("aria-disabled", String(Boolean(mark) || Boolean(state && state.result)));
    let label = `${where(index)}, ${mark || "empty"}`;
    if (winning.has(index)) label += ", winning line";
    else if (index === last) label += ", last move";
    if (index === hinted) label += ", the hint";
    button.setAttribute("aria-label", label);
  });
}

// ---- drawing ----------------------------------------------------------------------------
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
  const rows = state.rows || 3, cols = state.cols || 3;
  if (rows !== shape.rows || cols !== shape.cols) buildBoard(rows, cols);
  const moved = !before || before.game !== state.game || before.moves.length !== state.moves.length;
  if (moved) hintFor = null;
  renderCells(state.cells, state.line);
  drawStrike(state.line);

  const title = seats.map((s, n) => s ? `${n === me.seat ? "You" : shown(s)} (${s.mark})` : "waiting for a friend");
  $("game-heading").textContent = me.seat === 1 ? `${title[1]} against ${title[0]}` : `${title[0]} against ${title[1]}`;
  $("board-note").textContent = `${rows}×${cols} board, ${state.k || 3} in a row wins.`;

  $("status").textContent = statusText(before);
  if (!before || before.game !== state.game || before.moves.length < state.moves.length) notice("");
  if (before && moved && !(before.game === state.game && before.moves.length > state.moves.length)) news("");
  if (before && before.game !== state.game) $("saved").textContent = "";

  const seated = me.seat !== null;
  const computer = state.kind === "computer" && seated;
  $("undo").hidden = $("hint").hidden = !computer || Boolean(state.result);
  $("rematch").hidden = !(state.result && seated);
  $("new-game").hidden = false;

  // the room panel: the code, the link and its QR code for friends, and who sits where
  $("room").hidden = !friend && seated;
  $("room-code").textContent = shownCode(state.room);
  const link = share ? share.url : `${location.origin}/r/${state.room}`;
  $("room-link").href = link;
  $("room-link").textContent = link;
  const here = share && share.reach === "machine";
  $("reach").textContent = here
    ? "This link works only on this computer: the server listens on this machine alone. To play from another "
      + "device, start it with noughts web --host 0.0.0.0 (or give --public-url)."
    : "";
  $("qr").hidden = here;
  if (!here && $("qr").dataset.room !== state.room) {
    $("qr").dataset.room = state.room;
    $("qr").src = `/r/${state.room}/qr.svg`;
  }
  $("invite").textContent = seats[1] || !friend
    ? "Anyone who opens this link can watch:"
    : "Send this link to a friend; whoever opens it first takes the other seat:";
  $("watching").hidden = seated;
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

// "Ann played b1. ", kept while only who is connected or watching changes
let lastMoveNote = "";

function statusText(before) {
  const seats = state.seats;
  if (state.result) return state.result_text[me.seat === null ? 2 : me.seat]; // the match's sentence
  const turnSeat = seats.findIndex((s) => s && s.mark === state.turn);
  const toMove = turnSeat >= 0 ? turnSeat : seats.findIndex((s) => !s);
  const sameMoves = before && before.game === state.game && state.moves.length === before.moves.length;
  if (!sameMoves) {
    lastMoveNote = "";
    const fresh = !before || before.game !== state.game || state.moves.length > before.moves.length;
    if (state.moves.length && fresh) {
      const cell = state.moves[state.moves.length - 1];
      const mover = state.cells[cell];
      const moverSeat = seats.findIndex((s) => s && s.mark === mover);
      if (moverSeat !== me.seat) lastMoveNote = `${capital(seatName(seats[moverSeat], moverSeat))} played ${cellName(cell)}. `;
    }
  }
  const last = lastMoveNote;
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
  svg.classList.toggle("thin", Math.max(shape.rows, shape.cols) > 5);
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

function news(text) {
  $("news").textContent = text;
}

// ---- the start screen: board, opponent, who starts ----------------------------------------
function chosenShape() {
  return { rows: Number($("rows").value), cols: Number($("cols").value), k: Number($("k").value) };
}

function fillShape(saved) {
  const numbers = (low, high) => Array.from({ length: high - low + 1 }, (_, n) => {
    const option = document.createElement("option");
    option.value = option.textContent = String(low + n);
    return option;
  });
  $("rows").replaceChildren(...numbers(3, MAX_SIDE));
  $("cols").replaceChildren(...numbers(3, MAX_SIDE));
  $("rows").value = String(saved.rows);
  $("cols").value = String(saved.cols);
  $("k").dataset.natural = "";
  fillK(saved.k);
}

function fillK(wanted) {
  const { rows, cols } = chosenShape();
  const longest = Math.max(rows, cols);
  const options = [];
  for (let k = 3; k <= longest; k++) {
    const option = document.createElement("option");
    option.value = option.textContent = String(k);
    options.push(option);
  }
  const was = Number($("k").dataset.natural);
  $("k").replaceChildren(...options);
  const natural = Math.min(longest, longest <= 3 ? 3 : longest <= 5 ? 4 : 5); // tic-tac-toe, four in a row, gomoku
  $("k").dataset.natural = natural;
  // a k the person chose stays (if it fits); the natural k of the old size becomes the new size's
  const keep = wanted && wanted <= longest && wanted !== was;
  $("k").value = String(keep ? wanted : natural);
}

function savedShape() {
  const [rows, cols, k] = (localStorage.getItem(BOARD_KEY) || "3,3,3").split(",").map(Number);
  const fits = (n) => Number.isInteger(n) && n >= 3 && n <= MAX_SIDE;
  return fits(rows) && fits(cols) && Number.isInteger(k) && k >= 3 && k <= Math.max(rows, cols)
    ? { rows, cols, k } : { rows: 3, cols: 3, k: 3 };
}

function shapeChanged() {
  const chosen = chosenShape();
  localStorage.setItem(BOARD_KEY, `${chosen.rows},${chosen.cols},${chosen.k}`);
  if (!me.room) buildBoard(chosen.rows, chosen.cols);
  askPlayers();
}

// Which computer players can play the chosen board: the server works it out (the solver's
// players get about a second to show they can) and keeps the answer for that board.
function askPlayers() {
  able = null;
  offerOpponents();
  shapeAsked = `p.${++counter}`;
  send({ type: "players", ...chosenShape(), id: shapeAsked });
}

function offerOpponents() {
  const select = $("opponent");
  const offered = able === null ? players : players.filter((p) => able.includes(p.name));
  const chosen = select.dataset.chosen;
  select.replaceChildren(...offered.map((p) => {
    const option = document.createElement("option");
    option.value = p.name;
    option.textContent = p.label;
    return option;
  }));
  const fallback = offered.some((p) => p.name === select.dataset.fallback) ? select.dataset.fallback
    : offered.length ? offered[0].name : "";
  select.value = offered.some((p) => p.name === chosen) ? chosen : fallback;
  const play = $("play-computer");
  play.disabled = able === null || offered.length === 0;
  play.textContent = able === null ? "Checking the board…" : "Play the computer";
  if (able === null) $("opponent-unable").textContent = "";
  describeOpponent();
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
// the id names the move meant, so a double click is one move and a refusal of a move meant
// for an older board is recognised as such
function play(index) {
  if (!me.room || !state) {
    notice("Start a game first: choose an opponent, or play a friend.");
    return;
  }
  const ply = state.moves.length;
  const id = sameAsBefore(`move-${state.room}-${index}`, `m.${state.game}.${ply}.${index}`);
  const [, game, meant] = id.split(".").map(Number); // a repeat goes with the board it was meant for
  send({ type: "move", cell: index, game, ply: meant, id });
}

function undo() {
  if (!state) return;
  const id = sameAsBefore(`undo-${state.room}`, `u.${state.game}.${state.moves.length}`);
  send({ type: "undo", game: state.game, id });
}

function askHint() {
  if (!state) return;
  news("Working out a hint…");
  send({ type: "hint", id: `h.${state.game}.${state.moves.length}` }); // one hint per board, however often asked
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
  const { rows, cols } = shape;
  const row = Math.floor(index / cols), col = index % cols;
  const moves = {
    ArrowUp: [Math.max(0, row - 1), col], ArrowDown: [Math.min(rows - 1, row + 1), col],
    ArrowLeft: [row, Math.max(0, col - 1)], ArrowRight: [row, Math.min(cols - 1, col + 1)],
    Home: event.ctrlKey ? [0, 0] : [row, 0], End: event.ctrlKey ? [rows - 1, cols - 1] : [row, cols - 1],
    PageUp: [0, col], PageDown: [rows - 1, col],
  };
  const target = moves[event.key];
  if (!target) return; // Enter and Space reach the button's own click
  event.preventDefault();
  focusCell(target[0] * cols + target[1]);
}

function leaveRoom(tellServer = true) {
  if (tellServer && me.room) send({ type: "leave" });
  me = { room: null, seat: null };
  state = null;
  share = null;
  hintFor = null;
  if (location.pathname !== "/") history.pushState(null, "", "/");
  const chosen = chosenShape();
  buildBoard(chosen.rows, chosen.cols);
  drawStrike(null);
  $("game-heading").textContent = "Noughts and crosses";
  $("board-note").textContent = "";
  $("status").textContent = "Choose an opponent to start.";
  $("rematch").hidden = $("new-game").hidden = $("undo").hidden = $("hint").hidden = true;
  $("room").hidden = $("ask-name").hidden = true;
  $("tally").textContent = $("saved").textContent = "";
  news("");
  renderScores();
}

function first() {
  return $("first").value;
}

function rememberName() {
  const name = $("name").value.trim();
  if (name) localStorage.setItem(NAME_KEY, name); else localStorage.removeItem(NAME_KEY);
}

function start(what, message) {
  rememberName();
  wantBoardFocus = true;
  if (!request(what, { ...message, ...chosenShape(), first: first(), name: myName() })) wantBoardFocus = false;
}

// ---- wiring -----------------------------------------------------------------------------
function init() {
  fillShape(savedShape());
  buildBoard(chosenShape().rows, chosenShape().cols);
  const board = $("board");
  board.addEventListener("click", (event) => {
    const button = event.target.closest(".cell");
    if (button) play(Number(button.dataset.index));
  });
  board.addEventListener("keydown", (event) => {
    const button = event.target.closest(".cell");
    if (button) onCellKey(event, Number(button.dataset.index));
  });
  board.addEventListener("focusin", (event) => {
    const button = event.target.closest(".cell");
    if (button) setFocusIndex(Number(button.dataset.index));
  });
  $("name").value = savedName();
  $("rows").addEventListener("change", () => { fillK(Number($("k").value)); shapeChanged(); });
  $("cols").addEventListener("change", () => { fillK(Number($("k").value)); shapeChanged(); });
  $("k").addEventListener("change", shapeChanged);
  $("opponent").addEventListener("change", () => { $("opponent").dataset.chosen = $("opponent").value; describeOpponent(); });
  $("first").addEventListener("change", describeFirst);
  $("plain").checked = localStorage.getItem(PLAIN_KEY) === "1";
  plainMarks($("plain").checked);
  $("plain").addEventListener("change", () => plainMarks($("plain").checked));
  $("computer-form").addEventListener("submit", (event) => {
    event.preventDefault();
    if (able === null) return; // still checking which opponents can play the board
    start("computer", { type: "play_computer", opponent: $("opponent").value });
  });
  $("friend").addEventListener("click", () => start("friend", { type: "create_room" }));
  $("join-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const code = normalCode($("code").value);
    if (!code) { notice("Type the code your friend sent, like K7M2-QXAB-9CDE."); return; }
    rememberName();
    wantBoardFocus = true;
    enter(code);
  });
  $("ask-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const name = $("ask-input").value.trim();
    if (!name) return;
    $("name").value = name;
    rememberName();
    wantBoardFocus = true;
    join(normalCode($("ask-code").textContent));
  });
  $("rematch").addEventListener("click", () => {
    wantBoardFocus = true;
    if (state) send({ type: "rematch", id: sameAsBefore(`rematch-${state.room}`, `r.${state.game}`) });
  });
  $("undo").addEventListener("click", undo);
  $("hint").addEventListener("click", askHint);
  $("new-game").addEventListener("click", () => { leaveRoom(); $("rows").focus(); });
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
    if (code) enter(code); else leaveRoom();
  });
  window.addEventListener("resize", () => drawStrike(state && state.line));
  connect();
}

// A handle for the browser console (and the tests): anything sent is checked by the server.
window.noughts = { send, get state() { return state; }, get seat() { return me.seat; } };

init();
