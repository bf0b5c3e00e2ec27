/*
 * panel_sim: run the noughts panel firmware in simavr, for the tests (and for trying the
 * serial backend without a board).
 *
 *   panel_sim FIRMWARE.elf MCU [FREQUENCY]      e.g. panel_sim build/uno/noughts_panel.elf atmega328p
 *
 * The firmware's UART 0 is bridged to a pseudo-terminal; its name is the first line on stdout
 * ("pty /dev/pts/N"), so `noughts panel --backend serial` (or a test) can open it like a USB
 * port. The bridge runs in the simulation's own thread: Debian's simavr 1.6 uart_pty part
 * feeds the UART from a second thread without a lock, which races with the running core.
 *
 * Commands on stdin, one per line; answers on stdout (simavr's own chatter goes to stderr):
 *   led N ANODE CATHODE   LED N (0-31) lights while ANODE is an output driven high and CATHODE
 *                         is an output driven low, or CATHODE is GND. Pins are port+bit: C7
 *   lcd RS E D4 D5 D6 D7  a 16x2 HD44780 (simavr's part) on these pins, RW tied low
 *   run                   start the firmware (after the led and lcd lines)
 *   pin P V               drive input pin P to V (0 or 1), like a button with a pull-down
 *   adc CH MV             MV millivolts on ADC channel CH
 *   leds                  -> "leds CYCLES MAXLIT C0 C1 ...": for each LED, the cycles it was lit
 *                            since the last "leds"; MAXLIT the most LEDs lit at one instant
 *   lcd?                  -> "lcd LINE1|LINE2"
 *   time                  -> "time CYCLES"
 *   quit
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "avr_adc.h"
#include "avr_extint.h"
#include "avr_ioport.h"
#include "avr_uart.h"
#include "hd44780.h"
#include "sim_avr.h"
#include "sim_elf.h"
#include "sim_irq.h"

#define MAX_LEDS 32
#define PORTS 12 /* A..L */

static avr_t *avr;
static FILE *control; /* the real stdout */

/* LEDs --------------------------------------------------------------------------------- */

typedef struct { int port, bit; } pin_t; /* port -1: ground */

static struct { int used; pin_t anode, cathode; } leds[MAX_LEDS];
static uint8_t port_value[PORTS], port_ddr[PORTS];
static int port_watched[PORTS];
static uint32_t lit_now;
static avr_cycle_count_t lit_since, window_start;
static avr_cycle_count_t lit_cycles[MAX_LEDS];
static int max_lit;

static int driven(pin_t p, int level) {
	if (p.port < 0) return level == 0;
	return (port_ddr[p.port] >> p.bit & 1) && (port_value[p.port] >> p.bit & 1) == level;
}

static void account(void) {
	avr_cycle_count_t now = avr->cycle;
	for (int i = 0; i < MAX_LEDS; i++)
		if (lit_now >> i & 1) lit_cycles[i] += now - lit_since;
	lit_since = now;
}

/* Called on every write to a watched PORT or DDR register: exact, not sampled, so a glitch of
 * one instruction between two writes is seen too. */
static void leds_update(void) {
	uint32_t lit = 0;
	for (int i = 0; i < MAX_LEDS; i++)
		if (leds[i].used && driven(leds[i].anode, 1) && driven(leds[i].cathode, 0)) lit |= 1u << i;
	if (lit == lit_now) return;
	account();
	lit_now = lit;
	int count = __builtin_popcount(lit);
	if (count > max_lit) max_lit = count;
}

static void port_hook(struct avr_irq_t *irq, uint32_t value, void *param) {
	(void)irq;
	port_value[(intptr_t)param] = value;
	leds_update();
}

static void ddr_hook(struct avr_irq_t *irq, uint32_t value, void *param) {
	(void)irq;
	port_ddr[(intptr_t)param] = value; /* raised before the register changes: use the value */
	leds_update();
}

static void watch_port(int port) {
	if (port < 0 || port_watched[port]) return;
	port_watched[port] = 1;
	avr_irq_t *irqs = avr_io_getirq(avr, AVR_IOCTL_IOPORT_GETIRQ('A' + port), 0);
	if (!irqs) {
		fprintf(control, "error no port %c\n", 'A' + port);
		return;
	}
	avr_irq_register_notify(irqs + IOPORT_IRQ_REG_PORT, port_hook, (void *)(intptr_t)port);
	avr_irq_register_notify(irqs + IOPORT_IRQ_DIRECTION_ALL, ddr_hook, (void *)(intptr_t)port);
}

static int parse_pin(const char *text, pin_t *pin) {
	if (!strcmp(text, "GND")) {
		pin->port = -1;
		pin->bit = 0;
		return 1;
	}
	if (strlen(text) != 2 || text[0] < 'A' || text[0] >= 'A' + PORTS || text[1] < '0' || text[1] > '7')
		return 0;
	pin->port = text[0] - 'A';
	pin->bit = text[1] - '0';
	return 1;
}

/* UART <-> pty ------------------------------------------------------------------------- */

static int pty_master = -1;
static int uart_xon = 1;
static uint8_t to_avr[4096];
static size_t to_avr_len, to_avr_done;

static void uart_out_hook(struct avr_irq_t *irq, uint32_t value, void *param) {
	(void)irq;
	(void)param;
	uint8_t byte = value;
	/* A host that has not opened the port yet just misses the bytes, as with USB. */
	if (write(pty_master, &byte, 1) < 0 && errno != EAGAIN && errno != EIO)
		perror("pty write");
}

static void xon_hook(struct avr_irq_t *irq, uint32_t value, void *param) {
	(void)irq, (void)value, (void)param;
	uart_xon = 1;
}

static void xoff_hook(struct avr_irq_t *irq, uint32_t value, void *param) {
	(void)irq, (void)value, (void)param;
	uart_xon = 0;
}

static void pty_pump(void) {
	if (to_avr_done == to_avr_len) {
		ssize_t n = read(pty_master, to_avr, sizeof(to_avr));
		to_avr_len = n > 0 ? (size_t)n : 0;
		to_avr_done = 0;
	}
	avr_irq_t *input = avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_INPUT);
	while (uart_xon && to_avr_done < to_avr_len) avr_raise_irq(input, to_avr[to_avr_done++]);
}

static void uart_bridge(void) {
	char name[128];
	int slave;
	struct termios tio;
	if (openpty(&pty_master, &slave, name, NULL, NULL) < 0) {
		perror("openpty");
		exit(1);
	}
	tcgetattr(pty_master, &tio);
	cfmakeraw(&tio);
	tcsetattr(pty_master, TCSANOW, &tio);
	fcntl(pty_master, F_SETFL, fcntl(pty_master, F_GETFL) | O_NONBLOCK);
	close(slave); /* the host opens it by name; until then writes fail with EIO */

	uint32_t flags = 0; /* no echo of the UART on stdout, no sleeping when the firmware polls */
	avr_ioctl(avr, AVR_IOCTL_UART_SET_FLAGS('0'), &flags);
	avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUTPUT), uart_out_hook, NULL);
	avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUT_XON), xon_hook, NULL);
	avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUT_XOFF), xoff_hook, NULL);
	fprintf(control, "pty %s\n", name);
	fflush(control);
}

/* LCD ---------------------------------------------------------------------------------- */

static hd44780_t lcd;
static int lcd_attached;

static void attach_lcd(pin_t pins[6]) {
	static const int lcd_irqs[6] = {IRQ_HD44780_RS, IRQ_HD44780_E, IRQ_HD44780_D4,
	                                IRQ_HD44780_D5, IRQ_HD44780_D6, IRQ_HD44780_D7};
	hd44780_init(avr, &lcd, 16, 2);
	for (int i = 0; i < 6; i++)
		avr_connect_irq(avr_io_getirq(avr, AVR_IOCTL_IOPORT_GETIRQ('A' + pins[i].port), pins[i].bit),
		                lcd.irq + lcd_irqs[i]);
	lcd_attached = 1;
}

static void print_lcd(void) {
	char text[34];
	int n = 0;
	for (int row = 0; row < 2; row++) {
		for (int i = 0; i < 16; i++) {
			uint8_t c = lcd_attached ? lcd.vram[row * 0x40 + i] : ' ';
			text[n++] = c >= 32 && c < 127 && c != '|' ? c : '?';
		}
		if (!row) text[n++] = '|';
	}
	text[n] = 0;
	fprintf(control, "lcd %s\n", text);
}

/* control ------------------------------------------------------------------------------ */

static int running;

static void command(char *line) {
	char word[16], a[16], b[16], c[16], d[16], e[16], f[16];
	int n = sscanf(line, "%15s %15s %15s %15s %15s %15s %15s", word, a, b, c, d, e, f);
	if (n <= 0) return;
	if (!strcmp(word, "led") && n == 4) {
		int index = atoi(a);
		if (index < 0 || index >= MAX_LEDS || !parse_pin(b, &leds[index].anode) || !parse_pin(c, &leds[index].cathode)) {
			fprintf(control, "error bad led line: %s\n", line);
		} else {
			leds[index].used = 1;
			watch_port(leds[index].anode.port);
			watch_port(leds[index].cathode.port);
		}
	} else if (!strcmp(word, "lcd") && n == 7) {
		pin_t pins[6];
		char *names[6] = {a, b, c, d, e, f};
		int ok = 1;
		for (int i = 0; i < 6; i++) ok = ok && parse_pin(names[i], &pins[i]) && pins[i].port >= 0;
		if (ok) attach_lcd(pins);
		else fprintf(control, "error bad lcd line: %s\n", line);
	} else if (!strcmp(word, "run")) {
		running = 1;
	} else if (!strcmp(word, "pin") && n == 3) {
		pin_t pin;
		if (!parse_pin(a, &pin) || pin.port < 0) fprintf(control, "error bad pin: %s\n", a);
		else avr_raise_irq(avr_io_getirq(avr, AVR_IOCTL_IOPORT_GETIRQ('A' + pin.port), pin.bit), atoi(b) ? 1 : 0);
	} else if (!strcmp(word, "adc") && n == 3) {
		avr_raise_irq(avr_io_getirq(avr, AVR_IOCTL_ADC_GETIRQ, ADC_IRQ_ADC0 + atoi(a)), atoi(b));
	} else if (!strcmp(word, "leds")) {
		account();
		fprintf(control, "leds %llu %d", (unsigned long long)(avr->cycle - window_start), max_lit);
		for (int i = 0; i < MAX_LEDS; i++)
			if (leds[i].used) fprintf(control, " %llu", (unsigned long long)lit_cycles[i]);
		fprintf(control, "\n");
		memset(lit_cycles, 0, sizeof(lit_cycles));
		window_start = avr->cycle;
		max_lit = __builtin_popcount(lit_now);
	} else if (!strcmp(word, "lcd?")) {
		print_lcd();
	} else if (!strcmp(word, "time")) {
		fprintf(control, "time %llu\n", (unsigned long long)avr->cycle);
	} else if (!strcmp(word, "quit")) {
		exit(0);
	} else {
		fprintf(control, "error unknown command: %s\n", line);
	}
	fflush(control);
}

static char input[512];
static size_t input_len;

/* Read what is waiting on stdin (wait up to timeout_ms) and run every whole line. */
static void read_commands(int timeout_ms) {
	struct pollfd fd = {.fd = 0, .events = POLLIN};
	if (poll(&fd, 1, timeout_ms) <= 0) return;
	ssize_t n = read(0, input + input_len, sizeof(input) - 1 - input_len);
	if (n <= 0) exit(0); /* the test went away */
	input_len += n;
	char *start = input, *end;
	while ((end = memchr(start, '\n', input + input_len - start))) {
		*end = 0;
		command(start);
		start = end + 1;
	}
	input_len -= start - input;
	memmove(input, start, input_len);
	if (input_len == sizeof(input) - 1) input_len = 0; /* a runaway line: drop it */
}

int main(int argc, char *argv[]) {
	if (argc < 3) {
		fprintf(stderr, "usage: %s FIRMWARE.elf MCU [FREQUENCY]\n", argv[0]);
		return 2;
	}
	int out = dup(1);
	dup2(2, 1); /* simavr prints progress on stdout; keep it off the control channel */
	control = fdopen(out, "w");

	elf_firmware_t firmware;
	memset(&firmware, 0, sizeof(firmware));
	if (elf_read_firmware(argv[1], &firmware) != 0) {
		fprintf(stderr, "cannot read %s\n", argv[1]);
		return 1;
	}
	avr = avr_make_mcu_by_name(argv[2]);
	if (!avr) {
		fprintf(stderr, "simavr has no core called %s\n", argv[2]);
		return 1;
	}
	avr_init(avr);
	/* simavr 1.6 polls an INTn pin every cycle while it is low, for a level-triggered interrupt,
	 * even with the interrupt disabled (the reset state): the LCD's and the buttons' pins sit low,
	 * and the polling cost most of the CPU. The firmware enables no external interrupt. */
	for (int i = 0; i < EXTINT_COUNT; i++) avr_extint_set_strict_lvl_trig(avr, i, 0);
	avr_load_firmware(avr, &firmware);
	avr->frequency = argc > 3 ? strtoul(argv[3], NULL, 10) : 16000000;
	avr->vcc = avr->avcc = avr->aref = 5000; /* the ADC needs its reference, in millivolts */
	uart_bridge();

	while (!running) read_commands(-1);
	for (;;) {
		/* Serve the host every 4000 instructions or every millisecond of AVR time, whichever comes
		 * first: a sleeping AVR passes a whole timer period in one avr_run (simavr sleeps through it
		 * in real time, so an idle firmware costs next to no CPU). */
		avr_cycle_count_t until = avr->cycle + avr->frequency / 1000;
		for (int i = 0; i < 4000 && avr->cycle < until; i++) {
			int state = avr_run(avr);
			if (state == cpu_Done || state == cpu_Crashed) {
				fprintf(control, "stopped %s\n", state == cpu_Done ? "done" : "crashed");
				fflush(control);
				return 1;
			}
		}
		pty_pump();
		read_commands(0);
	}
}
