/*
 * cli_top.c - `packetfs top MOUNTPOINT`: every item of a mount, live, in
 * the terminal (ncurses), with keys that send ctl commands to the selected
 * item (SPEC §7, §9).
 *
 * Design: one thread, one loop, poll(2) on three descriptors: stdin (keys),
 * the inotify instance that watches the mount (top_watch.c) and a pipe that
 * the signal handlers write to (SIGWINCH: the terminal was resized;
 * SIGINT, SIGTERM, SIGHUP: quit). The model (top_model.c) changes only when
 * a notification names an item; the screen is rendered from the model
 * (top_render.c) after every wake, and once a second only to advance the
 * clock and the elapsed times shown (and to ask, with a statfs, whether
 * the mount's daemon still answers: its end sends no notification).
 *
 * The selection is kept by item name, so it stays on its item while items
 * come and go above it; the list scrolls to keep it in view.
 *
 * --once prints one frame as text (every item, no selection) and ends: for
 * scripts and tests. Without it, stdout must be a terminal.
 */
#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cli_int.h"
#include "top.h"

#define LINE_MAX_BYTES 4096

struct ui {
	struct top_model m;
	struct top_watch w;
	char sel[NAME_MAX + 1];  /* the selected item's name, "" when none */
	size_t cur;              /* its index while the model holds it */
	size_t first;            /* the item on the list's first row */
	int help;                /* the help replaces the list */
	char status[512];        /* the status line: the last key's result */
};

static int sig_pipe[2] = { -1, -1 };
static volatile sig_atomic_t quit_signal;

static void on_signal(int sig)
{
	int saved = errno;
	char c = (char)sig;

	if (sig != SIGWINCH)
		quit_signal = sig;
	if (write(sig_pipe[1], &c, 1) < 0) {
		/* A full pipe holds a wake-up already. */
	}
	errno = saved;
}

/* Installs the signal handlers, and their pipe the first time. 0 or
 * -errno. */
static int signals_start(void)
{
	static const int sigs[] = { SIGWINCH, SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa;
	size_t i;

	if (sig_pipe[0] < 0 && pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		return -errno;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (sigaction(sigs[i], &sa, NULL) < 0)
			return -errno;
	return 0;
}

/* The rows and columns of the terminal on stdout (0 when unknown). */
static void term_size(int *rows, int *cols)
{
	struct winsize ws;

	*rows = *cols = 0;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0) {
		*rows = ws.ws_row;
		*cols = ws.ws_col;
	}
}

/* Puts the selection on the item named ui->sel again after the model
 * changed: on its new index, or (gone) on the item now at its old place. */
static void reselect(struct ui *ui)
{
	long i = ui->sel[0] ? top_model_find(&ui->m, ui->sel) : -1;

	if (i >= 0)
		ui->cur = (size_t)i;
	else if (ui->cur >= ui->m.n)
		ui->cur = ui->m.n ? ui->m.n - 1 : 0;
	if (ui->m.n)
		snprintf(ui->sel, sizeof(ui->sel), "%s", ui->m.items[ui->cur].name);
	else
		ui->sel[0] = '\0';
}

/* Moves the selection to index i (clamped). */
static void select_at(struct ui *ui, long i)
{
	if (ui->m.n == 0)
		return;
	if (i < 0)
		i = 0;
	if ((size_t)i >= ui->m.n)
		i = (long)ui->m.n - 1;
	ui->cur = (size_t)i;
	snprintf(ui->sel, sizeof(ui->sel), "%s", ui->m.items[i].name);
}

/* --- sending a key's ctl line ------------------------------------------ */

/*
 * Writes cmd as one line to the selected item's ctl and puts its answer
 * (the engine's "CMD: ok" or "CMD: error: WHY", or the system's error) in
 * the status line. As `packetfs ctl` does, the answer is read back on the
 * same open file description, so it is this write's own.
 */
static void send_ctl(struct ui *ui, const char *cmd)
{
	char path[PATH_MAX], line[128], ans[1024];
	const char *p, *nl;
	ssize_t w, n;
	int fd, err = 0;
	size_t len;

	if (ui->m.n == 0) {
		snprintf(ui->status, sizeof(ui->status), "%s: no item selected", cmd);
		return;
	}
	snprintf(path, sizeof(path), "%s/%s/ctl", ui->m.root, ui->sel);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		snprintf(ui->status, sizeof(ui->status), "%s: %s: %s", ui->sel, cmd, strerror(errno));
		return;
	}
	len = (size_t)snprintf(line, sizeof(line), "%s\n", cmd);
	w = write(fd, line, len);
	if (w < 0)
		err = errno;
	else if ((size_t)w != len)
		err = EIO;
	n = pread(fd, ans, sizeof(ans) - 1, 0);
	close(fd);
	if (n < 0 || (err && err != EINVAL && err != EBUSY)) {
		snprintf(ui->status, sizeof(ui->status), "%s: %s: %s", ui->sel, cmd,
			 strerror(err ? err : errno));
		return;
	}
	ans[n] = '\0';
	/* The first line of the answer that is not the list of verbs. */
	for (p = ans; *p; p = nl ? nl + 1 : p + strlen(p)) {
		nl = strchr(p, '\n');
		len = nl ? (size_t)(nl - p) : strlen(p);
		if (len && strncmp(p, "verbs:", 6) != 0) {
			snprintf(ui->status, sizeof(ui->status), "%s: %.*s", ui->sel, (int)len, p);
			return;
		}
	}
	snprintf(ui->status, sizeof(ui->status), "%s: %s: %s", ui->sel, cmd,
		 err ? strerror(err) : "ok");
}

/* --- drawing ----------------------------------------------------------- */

static const char *const help_lines[] = {
	"packetfs top: every item of the mount, live",
	"",
	"  Up, k / Down, j     select the item above / below",
	"  PgUp / PgDn         a page up / down",
	"  Home, g / End, G    the first / the last item",
	"  a                   approve: pass the selected item's manual gate",
	"  c                   cancel what runs for the selected item",
	"  r                   rerun failed: run its failed recipes again",
	"  Ctrl-L              redraw the screen",
	"  q                   quit",
	"  ?                   this help (any key closes it)",
	"",
	"Columns: ITEM, STATE, STAGE, RUNNING (what runs and for how long),",
	"EVIDENCE (validated/named recipes), LAST ERROR. The result or refusal",
	"of a key's ctl command shows in the last line.",
};

/* The rows of the list: the screen less the header, the columns' line and
 * the status line (what a tiny terminal has room for). */
static int list_rows(void)
{
	return LINES > 3 ? LINES - 3 : 0;
}

/* Scrolls so that the selection is on the list's rows. */
static void scroll_to_selection(struct ui *ui)
{
	size_t rows = (size_t)list_rows();

	if (rows == 0 || ui->m.n == 0) {
		ui->first = 0;
		return;
	}
	if (ui->cur < ui->first)
		ui->first = ui->cur;
	else if (ui->cur >= ui->first + rows)
		ui->first = ui->cur - rows + 1;
	if (ui->first + rows > ui->m.n)
		ui->first = ui->m.n > rows ? ui->m.n - rows : 0;
}

/* Puts text on row y; the last row leaves its last column alone (a write
 * there would scroll the screen). */
static void put_line(int y, const char *text, int width)
{
	char fitted[LINE_MAX_BYTES];

	if (width <= 0)
		return;
	top_fit(fitted, sizeof(fitted), text, width, 0);
	mvaddstr(y, 0, fitted);
}

static void draw(struct ui *ui)
{
	char line[LINE_MAX_BYTES];
	int64_t now_ms = top_now_ms();
	int y, rows = list_rows(), cols = COLS;
	size_t i;

	erase();
	if (LINES <= 0 || cols <= 0)
		return;
	if (LINES > 1) {
		top_render_header(&ui->m, (int64_t)time(NULL), cols, line, sizeof(line));
		attron(A_BOLD);
		put_line(0, line, cols);
		attroff(A_BOLD);
	}
	if (LINES > 2) {
		top_render_columns(&ui->m, cols, line, sizeof(line));
		attron(A_UNDERLINE);
		put_line(1, line, cols);
		attroff(A_UNDERLINE);
	}
	scroll_to_selection(ui);
	for (y = 0; y < rows; y++) {
		if (ui->help) {
			if ((size_t)y < sizeof(help_lines) / sizeof(help_lines[0]))
				put_line(2 + y, help_lines[y], cols);
			continue;
		}
		i = ui->first + (size_t)y;
		if (i >= ui->m.n)
			break;
		top_render_row(&ui->m, i, now_ms, cols, i == ui->cur, line, sizeof(line));
		put_line(2 + y, line, cols);
		if (i == ui->cur)
			mvchgat(2 + y, 0, -1, A_REVERSE, 0, NULL);
	}
	if (ui->m.n == 0 && !ui->help && rows > 0)
		put_line(2, "  (no items: mkdir MOUNTPOINT/NAME or packetfs new makes one)", cols);
	if (ui->status[0])
		snprintf(line, sizeof(line), "%s", ui->status);
	else if (ui->w.unwatched)
		snprintf(line, sizeof(line), "%zu items without a watch (inotify: %s): their "
			 "changes come from %s/events", ui->w.unwatched,
			 strerror(ui->w.unwatched_err), ui->m.root);
	else
		snprintf(line, sizeof(line), "%zu/%zu  a approve  c cancel  r rerun failed  q quit  ? help",
			 ui->m.n ? ui->cur + 1 : 0, ui->m.n);
	put_line(LINES - 1, line, cols - 1);
	refresh();
}

/* --- keys -------------------------------------------------------------- */

/* Acts on key ch. Returns 1 to quit, else 0. */
static int key(struct ui *ui, int ch)
{
	long page = list_rows() > 1 ? list_rows() - 1 : 1;

	if (ch == KEY_RESIZE)
		return 0;
	if (ui->help) {
		ui->help = 0;
		return ch == 'q';
	}
	switch (ch) {
	case 'q':
	case 'Q':
		return 1;
	case KEY_UP:
	case 'k':
		select_at(ui, (long)ui->cur - 1);
		break;
	case KEY_DOWN:
	case 'j':
		select_at(ui, (long)ui->cur + 1);
		break;
	case KEY_PPAGE:
		select_at(ui, (long)ui->cur - page);
		break;
	case KEY_NPAGE:
	case ' ':
		select_at(ui, (long)ui->cur + page);
		break;
	case KEY_HOME:
	case 'g':
		select_at(ui, 0);
		break;
	case KEY_END:
	case 'G':
		select_at(ui, (long)ui->m.n - 1);
		break;
	case 'a':
		send_ctl(ui, "approve");
		break;
	case 'c':
		send_ctl(ui, "cancel");
		break;
	case 'r':
		send_ctl(ui, "rerun failed");
		break;
	case '?':
	case 'h':
		ui->help = 1;
		break;
	case 12: /* Ctrl-L */
		clearok(curscr, TRUE);
		break;
	default:
		break;
	}
	return 0;
}

/* Milliseconds until the wall clock's next second. */
static int to_next_second(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return 1000 - (int)(ts.tv_nsec / 1000000);
}

/* The loop of the live view, until q or a signal to quit. 0, or -errno
 * when the mount went away or a system call failed. */
static int run(struct ui *ui)
{
	struct pollfd fds[3] = {
		{ STDIN_FILENO, POLLIN, 0 },
		{ ui->w.fd, POLLIN, 0 },
		{ sig_pipe[0], POLLIN, 0 },
	};
	char drain[64];
	int r, ch, rows, cols, unread;

	for (;;) {
		/* Items not read yet (at the start, after lost events): a batch
		 * at a time, the screen's rows first, between looks at the keys. */
		unread = top_model_unread(&ui->m);
		if (unread) {
			scroll_to_selection(ui);
			r = top_watch_read(&ui->w, &ui->m, ui->first, (size_t)list_rows(), 64);
			if (r < 0)
				return r;
			reselect(ui);
			unread = top_model_unread(&ui->m);
		}
		draw(ui);
		r = poll(fds, 3, unread ? 0 : to_next_second());
		if (r < 0 && errno != EINTR)
			return -errno;
		if (r == 0 && !unread && (r = top_watch_alive(&ui->w)) < 0)
			return r;
		if (r <= 0)
			continue; /* a second passed: draw advances the times */
		if (fds[2].revents & POLLIN) {
			while (read(sig_pipe[0], drain, sizeof(drain)) > 0)
				;
			if (quit_signal)
				return 0;
			term_size(&rows, &cols);
			if (rows > 0 && cols > 0)
				resizeterm(rows, cols);
		}
		if (fds[1].revents & POLLIN) {
			r = top_watch_drain(&ui->w, &ui->m);
			if (r >= 0)
				r = top_watch_read(&ui->w, &ui->m, ui->first, (size_t)list_rows(), 256);
			if (r < 0)
				return r;
			reselect(ui);
		}
		if (fds[0].revents & (POLLHUP | POLLERR))
			return 0;
		if (fds[0].revents & POLLIN) {
			while ((ch = getch()) != ERR) {
				if (key(ui, ch))
					return 0;
			}
		}
	}
}

/* --once: the frame as text, width $COLUMNS, the terminal's, else 80. */
static int print_once(struct ui *ui)
{
	char line[LINE_MAX_BYTES];
	const char *env = getenv("COLUMNS");
	int64_t now_ms = top_now_ms();
	int rows, width = 0;
	size_t i;

	if (env && *env)
		width = atoi(env);
	if (width <= 0 || width > LINE_MAX_BYTES / 4) {
		term_size(&rows, &width);
		if (width <= 0)
			width = 80;
	}
	top_render_header(&ui->m, (int64_t)time(NULL), width, line, sizeof(line));
	printf("%s\n", line);
	top_render_columns(&ui->m, width, line, sizeof(line));
	printf("%s\n", line);
	for (i = 0; i < ui->m.n; i++) {
		top_render_row(&ui->m, i, now_ms, width, 0, line, sizeof(line));
		printf("%s\n", line);
	}
	return fflush(stdout) == 0 ? 0 : cli_fail("top", "stdout: %s", strerror(errno));
}

/* Starts the screen into *scr: 0, or 1 after saying why it can not. */
static int screen_start(SCREEN **scr)
{
	if (signals_start() < 0)
		return cli_fail("top", "signals: %s", strerror(errno));
	/* newterm, unlike initscr, returns when the terminal is unknown. */
	*scr = newterm(NULL, stdout, stdin);
	if (*scr == NULL)
		return cli_fail("top", "the terminal type '%s' ($TERM) is unknown",
				getenv("TERM") ? getenv("TERM") : "");
	/* initscr's own handler for SIGWINCH gives way to the pipe's. */
	signals_start();
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	set_escdelay(25);
	curs_set(0);
	return 0;
}

int cli_top(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "once", no_argument, NULL, 'o' },
		CLI_OPTIONS_END,
	};
	struct ui ui;
	SCREEN *scr;
	char path[PATH_MAX], store[PATH_MAX];
	const char *mnt;
	int c, rc, once = 0, r;

	cli_opts_reset();
	while ((c = cli_next_option("top", argc, argv, ":h", longopts, &rc)) == 'o')
		once = 1;
	if (c == CLI_OPT_EXIT || (rc = cli_operands("top", argc, 1, 1, "missing MOUNTPOINT")))
		return rc;
	mnt = argv[optind];
	if (!once && !isatty(STDOUT_FILENO))
		return cli_usage_error("top", "stdout is not a terminal (--once prints one frame)");
	if (cli_mtab_path(mnt, path) == 0 && cli_mtab_dead(path, store, sizeof(store)))
		return cli_fail("top", "%s: the daemon of this mount (store %s) is gone; "
				"`packetfs mount %s %s` mounts the store again", mnt, store, store, mnt);
	if (!cli_is_mount(mnt))
		return cli_fail("top", "%s: not a packetfs mount point", mnt);
	setlocale(LC_ALL, "");
	memset(&ui, 0, sizeof(ui));
	ui.w.fd = ui.w.events_fd = -1;
	if (top_model_init(&ui.m, mnt) < 0)
		return cli_fail("top", "%s", strerror(ENOMEM));
	/* The watches before the first read: no change falls between. */
	r = once ? 0 : top_watch_start(&ui.w, &ui.m);
	if (r == 0)
		r = top_model_load(&ui.m, once);
	if (r < 0) {
		rc = cli_fail("top", "%s: %s", mnt, strerror(-r));
		goto out;
	}
	if (once) {
		rc = print_once(&ui);
		goto out;
	}
	reselect(&ui);
	if ((rc = screen_start(&scr)) != 0)
		goto out;
	r = run(&ui);
	endwin();
	delscreen(scr);
	if (r == -ENODEV || r == -ENOTCONN || r == -ECONNABORTED)
		rc = cli_fail("top", "%s: the mount went away", mnt);
	else if (r < 0)
		rc = cli_fail("top", "%s: %s", mnt, strerror(-r));
out:
	top_watch_stop(&ui.w);
	top_model_free(&ui.m);
	return rc;
}
