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
// A move sent and not yet answered: { game, ply, cell, mark, id }. Its mark is drawn at once; the
// server's next state confirms it, its error takes it back (the server sends no state between a
// person's move and the computer's reply, so without this the page would sit still meanwhile).
let inFlight = null;
let thinkingAfterMs = 300; // noughts.match.THINKING_AFTER (the welcome may say otherwise)
let thinkingTimer = null;
// The page's sentences (noughts.text.WEB_WORDS), by key: rendered into the page by the server, so they are
// here before the socket opens (the welcome carries them too).
let words = JSON.parse(document.body.dataset.words || "{}");
let openingMove = null; // a cell tapped on the start board: played once the game it starts is ours to move
let typed = ""; // a cell name being typed on the keyboard ("c4"), played with Enter
let awaitingGame = false; // a game against the computer asked for: its board comes after the computer's opening move, if it has it

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
    line.textContent = lost ? word("reconnected") : "";
    if (lost) setTimeout(() => { if (line.textContent === word("reconnected")) line.textContent = ""; }, 3000);
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
    camera.waiting = false; // a frame in flight is lost with its socket
    if (event.code === 1001 && !me.room) {
      // The server closes a socket that has sat on the start screen saying nothing for a while:
      // a normal end, not a lost connection. A new one is opened quietly.
      reopen = setTimeout(connect, 1000 * (0.5 + Math.random()));
      return;
    }
    lost = true;
    landed(null); // the move may or may not have arrived: the state sent on rejoining says which
    // Back off, with a random spread: when a server process stops, its players do not all
    // come back in the same millisecond (the rooms are kept in Redis, or lost with one process).
    const wait = Math.min(5000, 300 * 2 ** retry++) * (0.5 + Math.random());
    const line = $("connection");
    line.textContent = word("connection_lost");
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
    notice(word("not_connected"));
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

// Into room `code`: with this browser's seat token, or with a name. Without either, the visitor
// watches first: the server says whether a seat is free (then the name is asked) or the game is full.
function enter(code) {
  const token = tokens()[code];
  if (!token && !savedName() && (me.room !== code || me.seat === null)) {
    request(`look-${code}`, { type: "join", room: code, watch: true });
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

function askName(code, invitation) {
  $("ask-code").textContent = shownCode(code);
  $("ask-name").hidden = false;
  $("ask-name").dataset.invitation = invitation; // the status line while the name is asked
  $("ask-input").value = $("name").value.trim();
  arrange();
  $("status").textContent = invitation;
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
    words = message.words || words;
    if (typeof message.thinking_after === "number") thinkingAfterMs = 1000 * message.thinking_after;
    firstRules = message.first || [];
    $("opponent").dataset.fallback = message.default_opponent;
    if (!$("opponent").dataset.chosen) $("opponent").dataset.chosen = message.default_opponent;
    offerOpponents();
    offerFirst(message.default_first);
    if (!me.room && !roomFromPath()) startScreenWords();
    $("board").setAttribute("aria-label", word("board_label", shape)); // drawn before the words came
    renderCells(state ? state.cells : Array(shape.rows * shape.cols).fill(null), state && state.line);
  },
  players(message) {
    if (message.id !== shapeAsked) return; // an answer about a board chosen before
    able = message.able;
    $("opponent-unable").textContent = message.unable_text || ""; // the server's sentence (noughts.text.web_not_for_board)
    $("opponent").dataset.fallback = message.default; // the board's own default (noughts.players.default_for)
    offerOpponents();
  },
  joined(message) {
    me = { room: message.room, seat: message.seat };
    share = { url: message.url || `${location.origin}${message.link}`, reach: message.reach || "network" };
    if (message.token) saveToken(message.room, message.token);
    if (location.pathname !== message.link) history.pushState(null, "", message.link);
    $("ask-name").hidden = true;
    arrange();
    notice("");
    news("");
    $("saved").textContent = "";
    if (message.seat === null && message.seat_free) askName(message.room, message.message); // the name first
    else if (message.seat === null) news(message.message || ""); // the game is full: watching, and told so
    if (wantBoardFocus) {
      wantBoardFocus = false;
      setTimeout(() => focusCell(focusIndex), 0);
    }
  },
  state(message) {
    if (message.room !== me.room) return;
    const before = state;
    state = message;
    gameCame();
    if (inFlight && (state.game !== inFlight.game || state.moves.length !== inFlight.ply)) landed(null); // confirmed
    render(before);
    playOpening();
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
    if (inFlight && message.id === inFlight.id) landed(message); // refused: its mark is taken back
    if (message.re === "play_computer") openingMove = null;
    if (message.re === "play_computer" || message.re === "rematch" || message.re === "paper_start") gameCame();
    if (message.re === "picture") camera.waiting = false; // the frame was refused: the next may go
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
  done(message) {
    if (message.re === "play_computer" || message.re === "rematch") gameCame();
  },
  left() {},
  pong() {},
  paper(message) { // the server's reading of the frame in flight (or the notice that frames came too fast)
    camera.waiting = false;
    camera.shownSize = camera.sentSize;
    paperView = message;
    renderPaper();
    if (message.announce && $("speak").checked) speak(message.announce);
  },
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
  board.setAttribute("aria-label", word("board_label", { rows, cols }));
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
  const sent = inFlight && state && inFlight.game === state.game ? inFlight : null;
  cellButtons().forEach((button, index) => {
    const mark = cells[index] || (sent && sent.cell === index ? sent.mark : null);
    button.firstChild.textContent = mark || "";
    button.dataset.mark = mark || "";
    button.classList.toggle("won", winning.has(index));
    button.classList.toggle("last", index === last && !winning.has(index));
    button.classList.toggle("hinted", index === hinted);
    // taken or finished: said to screen readers, yet still clickable, so the server can say why not
    button.setAttribute("aria-disabled", String(Boolean(mark) || Boolean(state && state.result)));
    let label = word("cell", { name: cellName(index), mark: mark || word("empty") });
    if (winning.has(index)) label = word("cell_won", { cell: label });
    else if (index === last) label = word("cell_last", { cell: label });
    if (index === hinted) label = word("cell_hint", { cell: label });
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
  if (!seat) return word("your_friend");
  if (number === me.seat) return word("you");
  return seat.kind === "computer" ? word("the_computer", { name: shown(seat) }) : seat.name;
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

  const title = seats.map((s, n) => s && (n === me.seat ? word("you_as", { mark: s.mark })
    : word("seat_as", { name: shown(s), mark: s.mark })));
  const free = seats.findIndex((s) => !s);
  const [near, far] = me.seat === 1 ? [title[1], title[0]] : title;
  $("game-heading").textContent = free >= 0 ? word("heading_waiting", { first: title[1 - free] })
    : word("heading", { first: near, second: far });
  $("board-note").textContent = word("board_note", { rows, cols, k: state.k || 3 });

  $("status").textContent = statusText(before);
  if (!before || before.game !== state.game || before.moves.length < state.moves.length) notice("");
  if (before && moved && !(before.game === state.game && before.moves.length > state.moves.length)) news("");
  if (before && before.game !== state.game) $("saved").textContent = "";

  const seated = me.seat !== null;
  const onPaper = state.kind === "paper";
  showPaper(onPaper && seated);
  if (onPaper) $("status").hidden = !state.result; // the camera's sentence says the rest (renderPaper)
  // between friends too: the match's one rule says when (your own last move; a hint at your move)
  $("undo").hidden = $("hint").hidden = !seated || Boolean(state.result) || onPaper; // on paper, the pen decides
  $("rematch").hidden = !(state.result && seated) || onPaper; // a new empty sheet starts the next game
  $("new-game").hidden = false;

  // the room panel: the code, the link and its QR code for friends, and who sits where
  $("room").hidden = !friend && (seated || onPaper); // a paper game is one person's: no link to share
  $("room-code").textContent = shownCode(state.room);
  const link = share ? share.url : `${location.origin}/r/${state.room}`;
  $("room-link").href = link;
  $("room-link").textContent = link;
  const here = share && share.reach === "machine";
  $("reach").textContent = here ? word("link_here_only") : "";
  $("qr").hidden = here;
  if (!here && $("qr").dataset.room !== state.room) {
    $("qr").dataset.room = state.room;
    $("qr").src = `/r/${state.room}/qr.svg`;
  }
  $("invite").textContent = word(seats[1] || !friend ? "invite_watch" : "invite_friend");
  $("watching").hidden = seated;
  $("watching").textContent = word("watching");
  $("seats").replaceChildren(...seats.map((seat, n) => {
    const item = document.createElement("li");
    if (!seat) {
      const other = seats[1 - n];
      item.textContent = word("seat_free", { mark: other && other.mark === "X" ? "O" : "X" });
    } else {
      const line = word(n === me.seat ? "seat_you" : "seat", { mark: seat.mark, name: shown(seat) });
      item.textContent = seat.connected ? line : word("away", { seat: line });
    }
    return item;
  }));
  if (state.watchers) {
    const item = document.createElement("li");
    item.textContent = word("watchers", { count: state.watchers });
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
      if (moverSeat !== me.seat) {
        lastMoveNote = word("played", { who: capital(seatName(seats[moverSeat], moverSeat)), cell: cellName(cell) });
      }
    }
  }
  const last = lastMoveNote;
  const mark = state.turn;
  if (me.seat === null) {
    if (!$("ask-name").hidden) return $("ask-name").dataset.invitation; // asked to join first
    return last + word("watching_turn", { name: seats[toMove] ? shown(seats[toMove]) : word("a_friend"), mark });
  }
  if (toMove === me.seat) {
    const alone = state.kind === "friend" && !seats[1 - me.seat];
    return last + word(alone ? "friend_not_joined" : "your_turn", { mark });
  }
  const other = seats[toMove];
  if (!other) return last + word("wait_for_friend", { mark });
  if (other.kind === "computer") return last + word("computer_thinking", { name: shown(other) });
  return last + word(other.connected ? "their_turn" : "their_turn_away", { name: other.name, mark });
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
  for (const level of ["easy", "medium", "hard"]) {
    $(`high-${level}-label`).textContent = label(level); // the server's label, as every menu says it
    $(`high-${level}`).textContent = scores.high[level];
  }
  $("run").textContent = scores.run;
  let text = scores.enabled ? "" : word("scores_off");
  if (scores.enabled && state && state.kind === "friend") { // two-person games are kept by name
    const mine = me.seat === null ? null : state.seats[me.seat];
    const tally = mine && scores.people.find((p) => p.name === mine.name);
    if (tally) text = word("against_friends", tally);
  } else if (scores.enabled) {
    const opponent = state ? state.seats.find((s) => s && s.kind === "computer") : null;
    const name = opponent ? opponent.name : $("opponent").value;
    const tally = scores.opponents[name];
    if (tally) text = word("against_computer", { ...tally, name: label(name) });
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
  paperAllowed();
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
  play.textContent = word(able === null ? "checking_board" : "play_computer");
  paperAllowed();
  if (able === null) $("opponent-unable").textContent = "";
  describeOpponent();
}

function describeOpponent() {
  const chosen = players.find((p) => p.name === $("opponent").value);
  $("opponent-about").textContent = chosen ? chosen.description : "";
  renderScores();
}

// Who moves first: the server's rules with its labels (noughts.text.first_choices), the one chosen kept.
function offerFirst(fallback) {
  const select = $("first");
  const chosen = select.value || fallback;
  select.replaceChildren(...firstRules.map((rule) => {
    const option = document.createElement("option");
    option.value = rule.name;
    option.textContent = rule.label;
    return option;
  }));
  select.value = firstRules.some((rule) => rule.name === chosen) ? chosen : fallback;
  describeFirst();
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
  if (!me.room) {
    startWithMove(index);
    return;
  }
  if (!state) return; // joined: the board is on its way
  if (inFlight && inFlight.cell !== index) { // another cell while a move is on its way: said, not dropped
    const other = shown(state.seats[1 - me.seat]) || word("your_friend"); // (not joined yet)
    notice(word("wait_for", { name: other }));
    return;
  }
  const ply = state.moves.length;
  const id = sameAsBefore(`move-${state.room}-${index}`, `m.${state.game}.${ply}.${index}`);
  const [, game, meant] = id.split(".").map(Number); // a repeat goes with the board it was meant for
  const mine = me.seat === null ? null : state.seats[me.seat];
  if (!inFlight && mine && mine.mark === state.turn && !state.result && state.cells[index] === null
      && game === state.game && meant === ply) {
    inFlight = { game, ply, cell: index, mark: mine.mark, id, status: $("status").textContent };
    notice("");
    renderCells(state.cells, state.line); // the person's own mark, at once
    thinkingTimer = setTimeout(showThinking, thinkingAfterMs);
  }
  if (!send({ type: "move", cell: index, game, ply: meant, id })) landed(null);
}

// The move in flight has been answered: confirmed by a new state (refusal null) or refused.
function landed(refusal) {
  clearTimeout(thinkingTimer);
  const was = inFlight;
  inFlight = null;
  if (!was || !state) return;
  renderCells(state.cells, state.line);
  if (refusal) $("status").textContent = was.status;
}

// The computer takes longer than a moment over its reply: the page says so, by name ("Hard is thinking…"),
// instead of sitting still.
function showThinking() {
  if (!awaitingGame) {
    if (!inFlight || !state) return;
    const other = state.seats[1 - me.seat];
    if (!other || other.kind !== "computer") return; // a person's reply is not awaited here
  }
  // the room's computer; or, for a game asked for from the start screen, the opponent chosen there
  const computer = state && state.seats.find((seat) => seat && seat.kind === "computer");
  $("status").textContent = word("computer_thinking", { name: computer ? shown(computer) : label($("opponent").value) });
}

// A sentence of the server's (noughts.text.WEB_WORDS), its {placeholders} filled: the page words nothing itself.
function word(key, values = {}) {
  const template = typeof words[key] === "string" ? words[key] : "";
  return template.replace(/\{(\w+)\}/g, (whole, name) => (name in values ? String(values[name]) : whole));
}

function startScreenWords() {
  $("game-heading").textContent = word("title");
  $("status").textContent = word("choose_opponent");
}

// A tap on the start board: a game against the chosen opponent, that cell its first move.
function startWithMove(index) {
  if (!$("ask-name").hidden) { // invited to a friend's game: the name comes first
    $("ask-input").focus();
    return;
  }
  if ($("play-computer").disabled) {
    notice(word("start_first"));
    return;
  }
  openingMove = index;
  setFocusIndex(index);
  playComputer();
}

function playOpening() {
  if (openingMove === null || !state) return;
  const cell = openingMove;
  openingMove = null;
  const mine = me.seat === null ? null : state.seats[me.seat];
  // played if the game is ours to open; a game the computer opens has just begun, and is shown
  if (mine && mine.mark === state.turn && state.moves.length === 0 && state.cells[cell] === null) play(cell);
}

// ---- typing a cell: 1-9 on 3×3, or its name ("c4") and Enter ----------------------------------
function cellIndex(text) {
  const { rows, cols } = shape;
  const number = /^\d{1,3}$/.test(text) ? Number(text) : null;
  if (number !== null) return number >= 1 && number <= rows * cols ? number - 1 : null;
  const name = /^([a-z])(\d{1,2})$/.exec(text);
  if (!name) return null;
  const col = name[1].charCodeAt(0) - 97, row = Number(name[2]) - 1;
  return col < cols && row >= 0 && row < rows ? row * cols + col : null;
}

function showTyped(text) {
  typed = text;
  $("typed").textContent = text;
  $("typed").hidden = !text;
  const aimed = text ? cellIndex(text) : null; // the cell Enter will play, outlined
  cellButtons().forEach((button, index) => button.classList.toggle("aimed", index === aimed));
}

function playTyped(text) {
  const index = cellIndex(text);
  if (index === null) {
    const last = cellName(shape.rows * shape.cols - 1);
    notice(word("no_such_cell", { typed: text, last }));
    return;
  }
  play(index);
}

function onTypingKey(event) {
  if (event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) return;
  if (event.target.closest && event.target.closest("input, select, textarea, [contenteditable]")) return;
  const key = event.key;
  if (/^[1-9]$/.test(key) && !typed && shape.rows * shape.cols <= 9) { // as in the terminal and the window
    event.preventDefault();
    play(Number(key) - 1);
    return;
  }
  if (/^[a-z0-9]$/i.test(key)) {
    if (typed.length < 4) showTyped(typed + key.toLowerCase());
  } else if (!typed) {
    return;
  } else if (key === "Backspace") {
    showTyped(typed.slice(0, -1));
  } else if (key === "Escape") {
    showTyped("");
  } else if (key === "Enter") { // the typed name, not the focused button
    const text = typed;
    showTyped("");
    playTyped(text);
  } else {
    return;
  }
  event.preventDefault();
}

function undo() {
  if (!state) return;
  const id = sameAsBefore(`undo-${state.room}`, `u.${state.game}.${state.moves.length}`);
  send({ type: "undo", game: state.game, id });
}

function askHint() {
  if (!state) return;
  news(word("working_out_hint"));
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
  startScreenWords();
  $("board-note").textContent = "";
  $("rematch").hidden = $("new-game").hidden = $("undo").hidden = $("hint").hidden = true;
  showPaper(false);
  $("room").hidden = $("ask-name").hidden = true;
  $("tally").textContent = $("saved").textContent = "";
  news("");
  openingMove = null;
  landed(null);
  gameCame();
  arrange();
  renderScores();
}

function first() {
  return $("first").value;
}

function rememberName() {
  const name = $("name").value.trim();
  if (name) localStorage.setItem(NAME_KEY, name); else localStorage.removeItem(NAME_KEY);
}

function playComputer() {
  if (able === null) return; // still checking which opponents can play the board
  start("computer", { type: "play_computer", opponent: $("opponent").value });
  awaitGame();
}

function awaitGame() {
  awaitingGame = true;
  clearTimeout(thinkingTimer);
  thinkingTimer = setTimeout(showThinking, thinkingAfterMs);
}

function gameCame() {
  if (!awaitingGame) return;
  awaitingGame = false;
  clearTimeout(thinkingTimer);
}

// On a phone the start screen shows the new-game form first, a game its board (style.css).
function arrange() {
  document.body.classList.toggle("starting", !me.room && !roomFromPath() && $("ask-name").hidden);
}

function start(what, message) {
  rememberName();
  wantBoardFocus = true;
  if (!request(what, { ...message, ...chosenShape(), first: first(), name: myName() })) wantBoardFocus = false;
}

// ---- playing on paper: the camera's frames to the server, its reading drawn over the live view ------
// The server reads each frame (noughts.web.paper) and answers with a `paper` message: what to say, the
// computer's square to draw, the sheet's outline in the frame's pixels and each square's verdict.
const SPEAK_KEY = "noughts.speak"; // "0": the moves are not said aloud
const PAPER_SIDES = [3, 5]; // the rows and columns a paper game takes (noughts.web.protocol.PAPER_SIDES)
const FRAME_EVERY_MS = 500; // at most 2 frames a second (the server's picture_rate)
const FRAME_LONGEST = 960; // the longest side of a frame sent, in pixels
const FRAME_MOST_BYTES = 200 * 1024; // the server's max_picture_bytes
const FRAME_ANSWER_MS = 15000; // a frame never answered (lost with a socket) holds up the next no longer than this
const MARGIN_CELLS = 0.5; // the sheet's margin round its grid, in cells (noughts.sheet.geometry.Sheet: 15 mm, 30 mm)
// the camera: its stream, the frame loop's timer, whether a frame awaits its answer, the sizes of the
// frame in flight and of the frame whose reading is drawn (the outline is in its pixels)
const camera = { stream: null, timer: null, sentAt: 0, waiting: false, sentSize: null, shownSize: null, starting: false };
let paperView = null; // the last `paper` message
const frameCanvas = document.createElement("canvas");

function paperFits({ rows, cols }) {
  return rows >= PAPER_SIDES[0] && rows <= PAPER_SIDES[1] && cols >= PAPER_SIDES[0] && cols <= PAPER_SIDES[1];
}

function paperAllowed() {
  const fits = paperFits(chosenShape());
  $("paper-play").disabled = !fits || able === null;
  $("paper-sides").textContent = fits ? "" : word("paper_sides");
}

function playPaper() {
  if (able === null || !paperFits(chosenShape())) return;
  paperView = null;
  start("paper", { type: "paper_start", opponent: $("opponent").value });
  awaitGame();
}

// The paper screen, for the seated player of a paper room: the sheet to print, the camera, what it saw.
function showPaper(on) {
  document.body.classList.toggle("on-paper", on);
  $("paper").hidden = !on;
  if (!on) {
    $("status").hidden = false;
    stopCamera();
    paperView = null;
    $("camera-problem").textContent = "";
    return;
  }
  const { rows, cols } = state;
  const size = `${rows}x${cols}`;
  $("paper-sheet-for").textContent = word("paper_sheet_for", { rows, cols });
  $("sheet-pdf").href = `/paper/sheet.pdf?size=${size}`;
  $("sheet-png").href = `/paper/sheet.png?size=${size}`;
  $("start-camera").hidden = Boolean(camera.stream);
  renderPaper();
}

async function startCamera() {
  $("camera-problem").textContent = "";
  if (camera.stream || camera.starting) return;
  // browsers give the camera to secure pages only: over http:// from another machine there is no mediaDevices
  if (!window.isSecureContext || !navigator.mediaDevices || !navigator.mediaDevices.getUserMedia) {
    $("camera-problem").textContent = word(window.isSecureContext ? "camera_absent" : "camera_needs_https");
    return;
  }
  camera.starting = true;
  $("start-camera").disabled = true;
  $("paper-say").textContent = word("camera_starting");
  try {
    const stream = await navigator.mediaDevices.getUserMedia({
      audio: false, video: { facingMode: { ideal: "environment" }, width: { ideal: 1280 }, height: { ideal: 960 } },
    });
    if (!state || state.kind !== "paper") { // left the game while the browser asked
      stream.getTracks().forEach((track) => track.stop());
      return;
    }
    camera.stream = stream;
    const video = $("paper-video");
    video.srcObject = stream;
    $("camera").hidden = false;
    $("start-camera").hidden = true;
    $("paper").classList.add("running");
    await video.play().catch(() => {}); // muted and inline: allowed; the frame loop waits for pictures anyway
    camera.timer = setInterval(paperTick, 100);
  } catch (error) {
    const name = error && error.name;
    const key = name === "NotAllowedError" || name === "SecurityError" ? "camera_refused"
      : name === "NotFoundError" || name === "OverconstrainedError" ? "camera_absent" : "camera_busy";
    $("camera-problem").textContent = word(key);
    renderPaper();
  } finally {
    camera.starting = false;
    $("start-camera").disabled = false;
  }
}

function stopCamera() {
  clearInterval(camera.timer);
  camera.timer = null;
  if (camera.stream) camera.stream.getTracks().forEach((track) => track.stop());
  camera.stream = null;
  camera.waiting = false;
  $("paper-video").srcObject = null;
  $("camera").hidden = true;
  $("start-camera").hidden = false;
  $("paper").classList.remove("running");
  if ("speechSynthesis" in window) speechSynthesis.cancel();
}

// A frame goes when the last one has been answered and half a second has passed: never two in flight.
function paperTick() {
  const now = performance.now();
  if (camera.waiting && now - camera.sentAt < FRAME_ANSWER_MS) return;
  if (now - camera.sentAt < FRAME_EVERY_MS) return;
  const video = $("paper-video");
  if (video.readyState < 2 || !video.videoWidth) return;
  if (!ws || ws.readyState !== WebSocket.OPEN || !state || state.kind !== "paper" || me.seat === null) return;
  camera.waiting = true;
  camera.sentAt = now;
  sendFrame(video).catch(() => { camera.waiting = false; });
}

const jpeg = (canvas, quality) => new Promise((resolve) => canvas.toBlob(resolve, "image/jpeg", quality));

// The video's picture as a JPEG of at most FRAME_LONGEST pixels a side and FRAME_MOST_BYTES: lower quality
// first, then fewer pixels.
async function sendFrame(video) {
  let scale = Math.min(1, FRAME_LONGEST / Math.max(video.videoWidth, video.videoHeight));
  let blob = null;
  let size = null;
  for (let tries = 0; tries < 6 && !blob; tries++) {
    size = { width: Math.round(video.videoWidth * scale), height: Math.round(video.videoHeight * scale) };
    frameCanvas.width = size.width;
    frameCanvas.height = size.height;
    frameCanvas.getContext("2d").drawImage(video, 0, 0, size.width, size.height);
    for (const quality of [0.8, 0.65, 0.5]) {
      const made = await jpeg(frameCanvas, quality);
      if (made && made.size <= FRAME_MOST_BYTES) { blob = made; break; }
    }
    scale *= 0.75;
  }
  if (!blob || !ws || ws.readyState !== WebSocket.OPEN) {
    camera.waiting = false;
    return;
  }
  camera.sentSize = size;
  ws.send(blob);
}

function renderPaper() {
  const view = paperView;
  const computer = state && state.seats.find((seat) => seat && seat.kind === "computer");
  const drawing = view && view.phase === "draw" && view.owed && computer;
  $("paper-owed").hidden = !drawing;
  if (drawing) {
    $("paper-owed-label").textContent = word("paper_draw_for", { mark: computer.mark });
    $("paper-owed-cell").textContent = view.owed;
  }
  if (view) $("paper-say").textContent = view.say;
  drawOverlay();
}

// The unit square onto the quadrilateral p0..p3 (clockwise from the top-left): a homography (Heckbert's
// square-to-quad), so the squares' centres fall where the tilted sheet's squares are.
function squareToQuad([[x0, y0], [x1, y1], [x2, y2], [x3, y3]]) {
  const sx = x0 - x1 + x2 - x3, sy = y0 - y1 + y2 - y3;
  let g = 0, h = 0;
  if (sx || sy) {
    const dx1 = x1 - x2, dx2 = x3 - x2, dy1 = y1 - y2, dy2 = y3 - y2;
    const den = dx1 * dy2 - dx2 * dy1;
    g = (sx * dy2 - dx2 * sy) / den;
    h = (dx1 * sy - sx * dy1) / den;
  }
  const a = x1 - x0 + g * x1, b = x3 - x0 + h * x3, d = y1 - y0 + g * y1, e = y3 - y0 + h * y3;
  return (u, v) => {
    const w = g * u + h * v + 1;
    return [(a * u + b * v + x0) / w, (d * u + e * v + y0) / w];
  };
}

// Over the live view: the sheet's outline and each square's verdict, X and O in their colours when sure,
// in the alert colour with a dashed ring when not; the square owed ringed.
function drawOverlay() {
  const canvas = $("paper-overlay");
  const video = $("paper-video");
  const box = video.getBoundingClientRect();
  const ratio = window.devicePixelRatio || 1;
  canvas.width = Math.max(1, Math.round(box.width * ratio));
  canvas.height = Math.max(1, Math.round(box.height * ratio));
  const context = canvas.getContext("2d");
  context.clearRect(0, 0, canvas.width, canvas.height);
  const view = paperView;
  const frame = camera.shownSize;
  if (!view || !view.outline || !frame || !state || $("camera").hidden) {
    canvas.setAttribute("aria-label", word("paper_view_none"));
    return;
  }
  const scale = (box.width * ratio) / frame.width; // the video is shown whole, at the frame's proportions
  const corners = view.outline.map(([x, y]) => [x * scale, y * scale]);
  const styles = getComputedStyle(document.documentElement);
  const colour = (name) => styles.getPropertyValue(name).trim();
  context.lineJoin = "round";
  context.lineWidth = 3 * ratio;
  context.strokeStyle = "#22c55e";
  context.beginPath();
  corners.forEach(([x, y], n) => (n ? context.lineTo(x, y) : context.moveTo(x, y)));
  context.closePath();
  context.stroke();
  const { rows, cols } = state;
  const place = squareToQuad(corners);
  const across = cols + 2 * MARGIN_CELLS, down = rows + 2 * MARGIN_CELLS;
  const centre = (cell) => place((MARGIN_CELLS + (cell % cols) + 0.5) / across,
    (MARGIN_CELLS + Math.floor(cell / cols) + 0.5) / down);
  const owed = view.phase === "draw" && view.owed ? cellIndexOn(view.owed, rows, cols) : null;
  const seen = [];
  view.cells.forEach((verdict, cell) => {
    const [x, y] = centre(cell);
    const [nx, ny] = centre(cell % cols + 1 < cols ? cell + 1 : cell - 1); // a neighbour: the square's size here
    const side = Math.hypot(nx - x, ny - y);
    const shown = verdict.mark || (verdict.sure ? "" : "?");
    if (shown) seen.push(`${cellNameOn(cell, cols)} ${shown}${verdict.sure ? "" : "?"}`);
    if (cell === owed) {
      context.lineWidth = 4 * ratio;
      context.strokeStyle = colour("--accent") || "#1f5fbf";
      context.strokeRect(x - side * 0.42, y - side * 0.42, side * 0.84, side * 0.84);
    }
    if (!shown) {
      context.fillStyle = "rgba(34, 197, 94, 0.85)";
      context.beginPath();
      context.arc(x, y, Math.max(2 * ratio, side * 0.05), 0, 2 * Math.PI);
      context.fill();
      return;
    }
    const ink = !verdict.sure ? "#e11d48" : shown === "X" ? colour("--x") : shown === "O" ? colour("--o") : "#e11d48";
    context.font = `700 ${Math.round(side * 0.55)}px ${getComputedStyle(document.body).fontFamily}`;
    context.textAlign = "center";
    context.textBaseline = "middle";
    context.lineWidth = Math.max(3, side * 0.08);
    context.strokeStyle = "rgba(255, 255, 255, 0.9)";
    context.strokeText(shown, x, y);
    context.fillStyle = ink;
    context.fillText(shown, x, y);
    if (!verdict.sure) {
      context.setLineDash([6 * ratio, 5 * ratio]);
      context.lineWidth = 3 * ratio;
      context.strokeStyle = ink;
      context.beginPath();
      context.arc(x, y, side * 0.4, 0, 2 * Math.PI);
      context.stroke();
      context.setLineDash([]);
    }
  });
  canvas.setAttribute("aria-label", word("paper_view", { seen: seen.join(", ") || word("empty") }));
}

const cellNameOn = (index, cols) => `${letter(index % cols)}${Math.floor(index / cols) + 1}`;

function cellIndexOn(name, rows, cols) {
  const found = /^([a-z])(\d{1,2})$/.exec(name);
  if (!found) return null;
  const col = found[1].charCodeAt(0) - 97, row = Number(found[2]) - 1;
  return col < cols && row >= 0 && row < rows ? row * cols + col : null;
}

function speak(sentence) {
  if (!("speechSynthesis" in window)) return;
  speechSynthesis.cancel(); // the newest sentence, not a queue of old ones
  const utterance = new SpeechSynthesisUtterance(sentence);
  utterance.lang = document.documentElement.lang || "en";
  speechSynthesis.speak(utterance);
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
  document.addEventListener("keydown", onTypingKey);
  board.addEventListener("focusin", (event) => {
    const button = event.target.closest(".cell");
    if (button) setFocusIndex(Number(button.dataset.index));
  });
  $("name").value = savedName();
  arrange();
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
    playComputer();
  });
  $("friend").addEventListener("click", () => start("friend", { type: "create_room" }));
  $("paper-play").addEventListener("click", playPaper);
  $("start-camera").addEventListener("click", startCamera);
  $("speak").checked = localStorage.getItem(SPEAK_KEY) !== "0";
  $("speak").addEventListener("change", () => {
    if ($("speak").checked) localStorage.removeItem(SPEAK_KEY); else localStorage.setItem(SPEAK_KEY, "0");
    if (!$("speak").checked && "speechSynthesis" in window) speechSynthesis.cancel();
  });
  window.addEventListener("resize", drawOverlay);
  $("join-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const code = normalCode($("code").value);
    if (!code) { notice(word("type_code")); return; }
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
    if (!state) return;
    send({ type: "rematch", id: sameAsBefore(`rematch-${state.room}`, `r.${state.game}`) });
    if (state.kind === "computer" && state.result) awaitGame(); // (a second press, after the new game came: nothing to await)
  });
  $("undo").addEventListener("click", undo);
  $("hint").addEventListener("click", askHint);
  $("new-game").addEventListener("click", () => { leaveRoom(); $("rows").focus(); });
  $("copy").addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText($("room-link").href);
      $("saved").textContent = word("link_copied");
    } catch {
      $("saved").textContent = word("copy_by_hand");
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
window.noughts = { send, get state() { return state; }, get seat() { return me.seat; }, get paper() { return paperView; } };

init();
