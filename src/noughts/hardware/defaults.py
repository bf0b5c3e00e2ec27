"""The default panel configuration for each build, as the TOML a person would write.

``noughts panel config --build uno`` prints one of these; a config file only needs the keys it
changes, the rest come from the build it names. Kept as Python strings rather than data files
so they travel with the package whatever installs it.
"""

from __future__ import annotations

from noughts.text import first_label, short_first_label

__all__ = ["BUILDS", "DEFAULT_TOML", "GRID_FIRST", "TWO_PEOPLE"]

GRID_FIRST = ("me", "computer", "alternate")
"""The choice grid's columns, left to right: who starts, in the match's words."""
TWO_PEOPLE = ("Green", "Red")
"""The two people's names in two-person mode: the colours of their LEDs."""

_COMMON_GAME = f"""\
[game]
# The choice grid: hold a cell button while pressing reset. The row picks the opponent
# (cells 1-3 the first name, 4-6 the second, 7-9 the third), the column who starts
# ({", ".join(first_label(rule) for rule in GRID_FIRST)}). In two-person mode only the column counts
# ({", ".join(short_first_label(rule, *TWO_PEOPLE) for rule in GRID_FIRST)}).
opponents = ["easy", "medium", "hard"]  # the seed's own player: ["easy", "arduino", "hard"]
opponent = ""                 # at power-on; "" = noughts' default (medium); "arduino" = the seed's own player
first = "me"                  # me | computer | alternate | loser | random (person = me); the seed: me
thinking_seconds = 3.0        # the seed's arduinoDelay
flash = true                  # the seed's start-up flash
flash_step_seconds = 0.1      # the seed's startupFlashSpeed
match_games = 10              # a match is best of this many games; its score is on the LCD
message_seconds = 2.0         # at the end of a game the LCD's second line alternates this often
player = ""                   # your name in the scores; "" = the login name, else You
"""

_COMMON_SERIAL = """\
[serial]
# An Arduino running firmware/noughts_panel, on USB. The pins are the firmware's (the seed's).
port = "/dev/ttyACM0"         # or any pyserial URL: socket://host:port, rfc2217://...
baud = 57600
retry_seconds = 1.0           # a vanished port is retried this often while the game waits
hello_seconds = 5.0           # an Uno or Mega resets when the port opens; wait this long for it
"""

_LADDER = """\
[ladder]
# The seed's resButtons for the Uno's resistor ladder (10-bit readings). Cell n reads between
# thresholds[n-1] and thresholds[n-2]. `noughts panel calibrate` measures your own.
thresholds = [800, 400, 200, 160, 140, 120, 90, 85, 70]
"""

MEGA_TOML = f"""\
# noughts panel: the seed's Arduino Mega wiring, one pin per LED and per button.
build = "mega"

{_COMMON_GAME}
{_COMMON_SERIAL}
[gpio]
# On a Raspberry Pi (BCM numbers; any gpiozero pin name works: "GPIO17", "BOARD11", 17).
# A Pi has 28 GPIO pins and the full Mega wiring needs 30 plus the LCD's, so this build fits
# the 18 cell LEDs and the 10 buttons and leaves out the two winner LEDs, the LCD and the
# two-person switch (the lit cells still show the result). Give any of them a pin to fit it,
# or use buttons = "ladder", which frees five pins.
leds = "direct"               # direct: LED anode on the pin, cathode through 220 ohm to ground
buttons = "direct"            # direct: one pin per button; ladder: the Uno's resistor ladder
green = [2, 3, 4, 17, 27, 22, 10, 9, 11]     # cells 1-9, reading order
red = [0, 5, 6, 13, 19, 26, 14, 15, 18]
green_win = ""                # "" = not fitted
red_win = ""
cells = [23, 24, 25, 8, 7, 1, 12, 16, 20]
reset = 21
switch = ""                   # the two-person switch
pull_up = false               # false: buttons go to 3.3 V with pull-downs, as in the seed
debounce_ms = 20
sample_ms = 5

[gpio.charlieplex]
pins = [5, 6, 13, 19, 26]
green = [0, 8, 14, 2, 10, 16, 4, 12, 6]
red = [1, 9, 15, 3, 11, 17, 5, 13, 7]
green_win = 18
red_win = 19
slot_ms = 1.0

[gpio.adc]
channel = 0                   # MCP3008 on SPI0 CE0 (GPIO 8-11)

[lcd]
kind = "none"                 # none | i2c (a PCF8574 backpack) | gpio (RPLCD over RPi.GPIO)
expander = "PCF8574"
address = 0x27
bus = 1
rs = 25
e = 24
data = [23, 17, 18, 22]

{_LADDER}"""

UNO_TOML = f"""\
# noughts panel: the seed's Arduino Uno wiring, 20 LEDs Charlieplexed on five pins and the
# nine cell buttons on a resistor ladder into one analogue input.
build = "uno"

{_COMMON_GAME}
{_COMMON_SERIAL}
[gpio]
# On a Raspberry Pi: the five Charlieplex lines on GPIO pins, the ladder through an MCP3008
# ADC on SPI0, the LCD on an I2C backpack; 13 pins in all.
leds = "charlieplex"
buttons = "ladder"
green = []
red = []
green_win = ""
red_win = ""
cells = []
reset = 21
switch = 20
pull_up = false
debounce_ms = 20
sample_ms = 5

[gpio.charlieplex]
# LED number n lights when pins[a] drives high and pins[b] low, for the pin pair n / 2 taken in
# the order 01 02 03 04 12 13 14 23 24 34 (a < b for even n, swapped for odd n). The numbers
# below are the seed's green[3][3], red[3][3], greenWin and redWin. Never use GPIO2 or GPIO3:
# their fixed pull-ups would light LEDs.
pins = [5, 6, 13, 19, 26]
green = [0, 8, 14, 2, 10, 16, 4, 12, 6]
red = [1, 9, 15, 3, 11, 17, 5, 13, 7]
green_win = 18
red_win = 19
slot_ms = 1.0                 # each lit LED's turn; the refresh thread wakes this often

[gpio.adc]
channel = 0

[lcd]
kind = "i2c"
expander = "PCF8574"
address = 0x27
bus = 1
rs = 25
e = 24
data = [23, 17, 18, 22]

{_LADDER}"""

BUILDS = ("mega", "uno")
DEFAULT_TOML = {"mega": MEGA_TOML, "uno": UNO_TOML}
