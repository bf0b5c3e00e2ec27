// noughts panel firmware: the LEDs, buttons and LCD of the seed's Arduino tic-tac-toe board,
// driven over USB by a host running `noughts panel --backend serial`.
//
// The sketch does I/O only: it lights what the host asks for, refreshes the Charlieplexed LEDs
// (Uno), reads and debounces the buttons (one pin each on the Mega, a resistor ladder on one
// analogue pin on the Uno) and writes the LCD. The game itself runs in Python on the host.
//
// Line protocol, version 1 (docs/hardware.md has the full reference). ASCII lines end in \n.
//   host -> board                         board -> host
//   ?            who are you              NOUGHTS 1 mega|uno   hello (also sent at start-up)
//   L hhhhh      LED mask, hex            P id / U id          button id pressed / released
//   T r text     LCD row r (0/1) text     A nnn                raw ladder reading (Uno, A 1)
//   K t1 .. t9   ladder thresholds (Uno)  E message            the last command was refused
//   A 1 / A 0    raw ladder readings on/off
// LED mask bits: 0-8 green cells 1-9, 9-17 red cells 1-9, 18 green winner, 19 red winner.
// Button ids: 1-9 the cells, R reset, S the two-person switch (P S = switch on).

#include <avr/sleep.h>

#define PROTOCOL_VERSION 1
#define BAUD 57600

#if defined(__AVR_ATmega2560__) || defined(__AVR_ATmega1280__)
#define PANEL_MEGA 1
#define BOARD_NAME "mega"
#else
#define PANEL_UNO 1
#define BOARD_NAME "uno"
#endif

const uint8_t LED_COUNT = 20;
const uint8_t INPUT_COUNT = 11;  // cells 1-9, reset, switch
const char INPUT_IDS[INPUT_COUNT] = {'1', '2', '3', '4', '5', '6', '7', '8', '9', 'R', 'S'};
const uint8_t RESET_INPUT = 9;
const uint8_t SWITCH_INPUT = 10;
const unsigned long DEBOUNCE_MS = 20;

#ifdef PANEL_MEGA
// The seed's Mega wiring: one pin per LED (anode to the pin, cathode to ground through 220 ohm)
// and per button (to +5 V, with a 10k pull-down, so pressed reads HIGH).
const uint8_t LED_PINS[LED_COUNT] = {30, 31, 32, 33, 34, 35, 36, 37, 38,
                                     40, 41, 42, 43, 44, 45, 46, 47, 48,
                                     50, 51};
const uint8_t INPUT_PINS[INPUT_COUNT] = {2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
// LiquidCrystal lcd(A4, A5, A3, A2, A1, A0) in the seed: RS, E, D4, D5, D6, D7.
const uint8_t LCD_RS = A4;
const uint8_t LCD_E = A5;
const uint8_t LCD_D[4] = {A3, A2, A1, A0};
#else
// The seed's Uno wiring: 20 LEDs Charlieplexed on five pins, the nine cell buttons on a
// resistor ladder into A0, reset on 13. The LCD and the switch are additions on free pins.
const uint8_t CHARLIE_PINS[5] = {5, 6, 9, 10, 11};
// LED number n lights from pin pair n / 2 (pairs in the order 01 02 03 04 12 13 14 23 24 34 of
// CHARLIE_PINS); even n drives the first pin of the pair high, odd n the second.
const uint8_t PAIRS[10][2] = {{0, 1}, {0, 2}, {0, 3}, {0, 4}, {1, 2},
                              {1, 3}, {1, 4}, {2, 3}, {2, 4}, {3, 4}};
// Mask bit -> the seed's LED numbers: green[3][3], red[3][3], greenWin, redWin.
const uint8_t LED_NUMBERS[LED_COUNT] = {0, 8, 14, 2, 10, 16, 4, 12, 6,
                                        1, 9, 15, 3, 11, 17, 5, 13, 7,
                                        18, 19};
const uint8_t LADDER_PIN = A0;
const uint8_t RESET_PIN = 13;
const uint8_t SWITCH_PIN = A1;
const uint8_t LCD_RS = 2;
const uint8_t LCD_E = 3;
const uint8_t LCD_D[4] = {4, 7, 8, 12};
// The seed's resButtons: cell n reads between thresholds[n - 1] and thresholds[n - 2].
uint16_t thresholds[9] = {800, 400, 200, 160, 140, 120, 90, 85, 70};
const unsigned long CHARLIE_SLOT_US = 500;  // each lit LED's turn; 20 lit LEDs still refresh at 100 Hz
const unsigned long LADDER_PERIOD_MS = 2;
const unsigned long RAW_PERIOD_MS = 100;
#endif

unsigned long ledMask = 0;

// Debounce state: a reading must hold for DEBOUNCE_MS before it counts.
uint8_t rawState[INPUT_COUNT];
uint8_t stableState[INPUT_COUNT];
unsigned long rawSince[INPUT_COUNT];

char line[48];
uint8_t lineLength = 0;
bool lineTooLong = false;

// --- LCD: HD44780 in 4-bit mode, RW tied to ground, so every step waits out the busy time.

void lcdNibble(uint8_t nibble) {
  for (uint8_t i = 0; i < 4; i++) digitalWrite(LCD_D[i], (nibble >> i) & 1);
  digitalWrite(LCD_E, HIGH);
  delayMicroseconds(1);
  digitalWrite(LCD_E, LOW);
  delayMicroseconds(50);  // longer than the 37 us the controller needs per instruction
}

void lcdSend(uint8_t value, bool data) {
  digitalWrite(LCD_RS, data ? HIGH : LOW);
  lcdNibble(value >> 4);
  lcdNibble(value & 0x0F);
}

void lcdBegin() {
  pinMode(LCD_RS, OUTPUT);
  pinMode(LCD_E, OUTPUT);
  for (uint8_t i = 0; i < 4; i++) pinMode(LCD_D[i], OUTPUT);
  digitalWrite(LCD_RS, LOW);
  digitalWrite(LCD_E, LOW);
  delay(50);  // the controller needs 40 ms after power-up
  // The datasheet's reset by instruction: three 8-bit function sets, then switch to 4 bits.
  lcdNibble(0x3);
  delay(5);
  lcdNibble(0x3);
  delayMicroseconds(150);
  lcdNibble(0x3);
  lcdNibble(0x2);
  lcdSend(0x28, false);  // 4 bits, 2 lines, 5x8 font
  lcdSend(0x0C, false);  // display on, no cursor
  lcdSend(0x06, false);  // left to right, no shift
  lcdSend(0x01, false);  // clear
  delay(2);
}

void lcdRow(uint8_t row, const char *text) {
  lcdSend(0x80 | (row ? 0x40 : 0x00), false);
  bool ended = false;
  for (uint8_t i = 0; i < 16; i++) {
    if (!text[i]) ended = true;
    lcdSend(ended ? ' ' : text[i], true);  // pad, so a shorter text clears the old one
  }
}

// --- LEDs

#ifdef PANEL_MEGA
void showLeds() {
  for (uint8_t i = 0; i < LED_COUNT; i++) digitalWrite(LED_PINS[i], (ledMask >> i) & 1 ? HIGH : LOW);
}
#else
// The lit LEDs (the seed's numbers) in refresh order, kept as a list so that a refresh step is
// a few instructions: scanning a 32-bit mask bit by bit takes the AVR hundreds of microseconds.
uint8_t charlieList[LED_COUNT];
uint8_t charlieCount = 0;
uint8_t charlieNext = 0;   // index into charlieList of the next LED to drive
int8_t charlieOn = -1;     // the LED being driven now, -1 for none
volatile bool charlieDue = false;  // set every CHARLIE_SLOT_US by timer 2

// Timer 2 (CTC, clk/64: 4 us a count) ticks once a slot and wakes the idle loop. Its output pins
// (3 and 11) stay plain I/O: the compare outputs are left disconnected.
void charlieTimerBegin() {
  TCCR2A = _BV(WGM21);
  TCCR2B = _BV(CS22);
  OCR2A = CHARLIE_SLOT_US / 4 - 1;
  TIMSK2 = _BV(OCIE2A);
}

ISR(TIMER2_COMPA_vect) { charlieDue = true; }

void charliePins(int8_t led, uint8_t *anode, uint8_t *cathode) {
  const uint8_t *pair = PAIRS[led / 2];
  *anode = CHARLIE_PINS[pair[led & 1]];
  *cathode = CHARLIE_PINS[pair[1 - (led & 1)]];
}

void charlieRelease() {
  if (charlieOn < 0) return;
  uint8_t anode, cathode;
  charliePins(charlieOn, &anode, &cathode);
  // Anode low first, then both back to high impedance (PORT stays 0: no pull-ups).
  digitalWrite(anode, LOW);
  pinMode(anode, INPUT);
  pinMode(cathode, INPUT);
  charlieOn = -1;
}

void charlieDrive(int8_t led) {
  uint8_t anode, cathode;
  charliePins(led, &anode, &cathode);
  // Cathode low before the anode goes high, so no other LED ever sees a voltage.
  digitalWrite(cathode, LOW);
  pinMode(cathode, OUTPUT);
  pinMode(anode, OUTPUT);
  digitalWrite(anode, HIGH);
  charlieOn = led;
}

// One refresh step: the next lit LED takes its turn.
void charlieStep() {
  if (!charlieCount) return;
  if (charlieNext >= charlieCount) charlieNext = 0;
  int8_t led = charlieList[charlieNext++];
  if (led == charlieOn) return;  // the only lit LED stays on
  charlieRelease();
  charlieDrive(led);
}

void showLeds() {
  bool lit[LED_COUNT] = {false};
  for (uint8_t i = 0; i < LED_COUNT; i++)
    if ((ledMask >> i) & 1) lit[LED_NUMBERS[i]] = true;
  charlieCount = 0;
  for (uint8_t n = 0; n < LED_COUNT; n++)
    if (lit[n]) charlieList[charlieCount++] = n;
  if (charlieOn >= 0 && !lit[charlieOn]) charlieRelease();  // off at once, not at the next step
}

// The seed's decoding: cell n when thresholds[n-1] < reading < thresholds[n-2] (the first
// cell has no upper bound); a reading on a threshold or at the bottom is no button.
uint8_t ladderCell(int reading) {
  int upper = 10000;
  for (uint8_t i = 0; i < 9; i++) {
    if (reading > (int)thresholds[i] && reading < upper) return i + 1;
    upper = thresholds[i];
  }
  return 0;
}

uint8_t ladderRaw = 0, ladderStable = 0;
unsigned long ladderSince = 0, ladderLast = 0, rawLast = 0;
bool rawReports = false;
#endif

// --- serial

void sendHello() {
  Serial.print(F("NOUGHTS "));
  Serial.print(PROTOCOL_VERSION);
  Serial.print(' ');
  Serial.println(F(BOARD_NAME));
}

void sendButton(uint8_t input, bool pressed) {
  Serial.print(pressed ? 'P' : 'U');
  Serial.print(' ');
  Serial.println(INPUT_IDS[input]);
}

void sendError(const __FlashStringHelper *message) {
  Serial.print(F("E "));
  Serial.println(message);
}

bool parseHex(const char *text, unsigned long *value) {
  unsigned long result = 0;
  uint8_t digits = 0;
  for (; *text; text++, digits++) {
    char c = *text;
    uint8_t v;
    if (c >= '0' && c <= '9') v = c - '0';
    else if (c >= 'a' && c <= 'f') v = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') v = c - 'A' + 10;
    else return false;
    result = (result << 4) | v;
    if (digits >= 5) return false;
  }
  if (!digits || result >> LED_COUNT) return false;
  *value = result;
  return true;
}

void handleLine(char *text) {
  char command = text[0];
  bool bare = text[1] == '\0';
  if (command == '?' && bare) {
    sendHello();
    // Say what is held now, so a host that just connected knows the switch position.
    for (uint8_t i = 0; i < INPUT_COUNT; i++)
      if (stableState[i]) sendButton(i, true);
#ifdef PANEL_UNO
    if (ladderStable) {
      Serial.print(F("P "));
      Serial.println((char)('0' + ladderStable));
    }
#endif
  } else if (command == 'L' && text[1] == ' ') {
    unsigned long mask;
    if (!parseHex(text + 2, &mask)) return sendError(F("L takes a hex mask of 20 LEDs"));
    ledMask = mask;
    showLeds();
  } else if (command == 'T' && text[1] == ' ' && (text[2] == '0' || text[2] == '1') &&
             (text[3] == ' ' || text[3] == '\0')) {
    const char *row = text[3] ? text + 4 : text + 3;
    if (strlen(row) > 16) return sendError(F("T takes at most 16 characters"));
    lcdRow(text[2] - '0', row);
#ifdef PANEL_UNO
  } else if (command == 'K' && text[1] == ' ') {
    uint16_t values[9];
    char *cursor = text + 2;
    for (uint8_t i = 0; i < 9; i++) {
      char *end;
      long v = strtol(cursor, &end, 10);
      if (end == cursor || v < 1 || v > 1022 || (i && v >= values[i - 1]))
        return sendError(F("K takes 9 falling thresholds from 1022 to 1"));
      values[i] = v;
      cursor = end;
    }
    if (*cursor) return sendError(F("K takes 9 falling thresholds from 1022 to 1"));
    memcpy(thresholds, values, sizeof(thresholds));
  } else if (command == 'A' && text[1] == ' ' && (text[2] == '0' || text[2] == '1') && !text[3]) {
    rawReports = text[2] == '1';
#endif
  } else {
    sendError(F("unknown command"));
  }
}

void readSerial() {
  while (Serial.available()) {
    char c = Serial.read();
    if (c == '\n' || c == '\r') {
      if (lineTooLong) sendError(F("line too long"));
      else if (lineLength) {
        line[lineLength] = '\0';
        handleLine(line);
      }
      lineLength = 0;
      lineTooLong = false;
    } else if (lineLength < sizeof(line) - 1) {
      line[lineLength++] = c;
    } else {
      lineTooLong = true;
    }
  }
}

// --- inputs

uint8_t readInput(uint8_t i) {
#ifdef PANEL_MEGA
  return digitalRead(INPUT_PINS[i]) == HIGH;
#else
  if (i == RESET_INPUT) return digitalRead(RESET_PIN) == HIGH;
  if (i == SWITCH_INPUT) return digitalRead(SWITCH_PIN) == HIGH;
  return 0;  // the cells come from the ladder
#endif
}

void scanInputs(unsigned long now) {
  for (uint8_t i = 0; i < INPUT_COUNT; i++) {
    uint8_t value = readInput(i);
    if (value != rawState[i]) {
      rawState[i] = value;
      rawSince[i] = now;
    } else if (value != stableState[i] && now - rawSince[i] >= DEBOUNCE_MS) {
      stableState[i] = value;
      sendButton(i, value);
    }
  }
#ifdef PANEL_UNO
  if (now - ladderLast >= LADDER_PERIOD_MS) {
    ladderLast = now;
    int reading = analogRead(LADDER_PIN);
    uint8_t cell = ladderCell(reading);
    if (cell != ladderRaw) {
      ladderRaw = cell;
      ladderSince = now;
    } else if (cell != ladderStable && now - ladderSince >= DEBOUNCE_MS) {
      // One cell at a time on a ladder: a change is a release, then a press.
      if (ladderStable) sendButton(ladderStable - 1, false);
      ladderStable = cell;
      if (cell) sendButton(cell - 1, true);
    }
    if (rawReports && now - rawLast >= RAW_PERIOD_MS) {
      rawLast = now;
      Serial.print(F("A "));
      Serial.println(reading);
    }
  }
#endif
}

void setup() {
  Serial.begin(BAUD);
#ifdef PANEL_MEGA
  for (uint8_t i = 0; i < LED_COUNT; i++) pinMode(LED_PINS[i], OUTPUT);
  for (uint8_t i = 0; i < INPUT_COUNT; i++) pinMode(INPUT_PINS[i], INPUT);
#else
  for (uint8_t i = 0; i < 5; i++) pinMode(CHARLIE_PINS[i], INPUT);
  pinMode(RESET_PIN, INPUT);
  pinMode(SWITCH_PIN, INPUT);
#endif
  showLeds();
#ifdef PANEL_UNO
  charlieTimerBegin();
#endif
  lcdBegin();
  lcdRow(0, "noughts panel");
  lcdRow(1, "waiting for host");
  sendHello();
}

unsigned long lastScan = 0;

// Nothing to do until an interrupt: a byte from the host, the millisecond tick (timer 0) or the
// Uno's refresh tick. Idle sleep stops only the CPU (timers and UART run on), so the board draws
// less, and a simulator skips the idle cycles instead of running the loop flat out.
void idleUntilInterrupt() {
  set_sleep_mode(SLEEP_MODE_IDLE);
  cli();  // no interrupt between the checks and the sleep: sei lets one more instruction (sleep) run first
  bool idle = !Serial.available() && millis() == lastScan;
#ifdef PANEL_UNO
  idle = idle && !charlieDue;
#endif
  if (idle) {
    sleep_enable();
    sei();
    sleep_cpu();
    sleep_disable();
  }
  sei();
}

void loop() {
  readSerial();
  unsigned long now = millis();
  if (now != lastScan) {  // once a millisecond
    lastScan = now;
    scanInputs(now);
  }
#ifdef PANEL_UNO
  if (charlieDue) {
    charlieDue = false;
    charlieStep();
  }
#endif
  idleUntilInterrupt();
}
