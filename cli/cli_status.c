/*
 * cli_status.c - `packetfs status`: the status of one item, or a line (or
 * a JSON object) per live item; the lines form a table (libsmartcols) of
 * what runs, for how long, and the last error, fitted to the terminal. It reads from either source: a mount point
 * through the mount (ordinary reads of MOUNT/ITEM/status), or a store
 * through a read-only engine, so it also works on a store mounted
 * elsewhere. struct source hides which; an item is a directory holding a
 * ctl (learnings/ has none).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libsmartcols.h>

#include "cli.h"
#include "cli_int.h"
#include "engine.h"

/* Where status reads from: a mount (root) or a store (engine). */
struct source {
	const char *root;
	struct engine *engine;
};

/* Reads the packet path ("/fix-1/status") into out. */
static int source_read(struct source *s, const char *path, struct buf *out)
{
	char full[PATH_MAX];
	int fd, r;

	if (s->engine)
		return cli_engine_read_all(s->engine, path, out);
	if (snprintf(full, sizeof(full), "%s%s", s->root, path) >= (int)sizeof(full))
		return -ENAMETOOLONG;
	fd = open(full, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = util_read_fd(fd, MAX_READ, out);
	close(fd);
	return r;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int collect_item(void *arg, const char *name, const struct pfs_stat *st)
{
	if (!S_ISDIR(st->mode) || name[0] == '.')
		return 0;
	return strv_push(arg, name) < 0;
}

/* The names of the live items, sorted, into *out (NULL when none). */
static int source_items(struct source *s, char ***out)
{
	char path[PATH_MAX];
	struct dirent *de;
	struct stat st;
	DIR *d;
	int r = 0;

	*out = NULL;
	if (s->engine) {
		/* The names alone: nothing is rendered (index.html). */
		r = engine_list(s->engine, "/", collect_item, out);
		if (r > 0)
			r = -ENOMEM;
		/* An item has a ctl (learnings/ has none). */
		for (size_t i = 0, k = 0; r == 0 && *out; i++) {
			struct pfs_stat ps;

			snprintf(path, sizeof(path), "/%s/ctl", (*out)[i] ? (*out)[i] : "");
			if ((*out)[i] && engine_getattr(s->engine, path, &ps) != 0)
				free((*out)[i]);
			else
				(*out)[k++] = (*out)[i];
			if (!(*out)[i])
				break;
		}
	} else {
		d = opendir(s->root);
		if (d == NULL)
			return -errno;
		while (r == 0 && (de = readdir(d)) != NULL) {
			if (de->d_name[0] == '.')
				continue;
			/* An item has a ctl (learnings/ has none). */
			snprintf(path, sizeof(path), "%s/%s/ctl", s->root, de->d_name);
			if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
				r = strv_push(out, de->d_name);
		}
		closedir(d);
	}
	if (r < 0) {
		strv_free(*out);
		*out = NULL;
		return r;
	}
	if (*out)
		qsort(*out, strv_len(*out), sizeof(char *), cmp_str);
	return 0;
}

/* The value of "key: value" in a status text, copied into val. */
static void status_value(const char *text, const char *key, char *val, size_t len)
{
	size_t kl = strlen(key);
	const char *p = text;

	snprintf(val, len, "-");
	while (p && *p) {
		const char *eol = strchr(p, '\n');
		size_t ll = eol ? (size_t)(eol - p) : strlen(p);

		if (ll > kl + 1 && strncmp(p, key, kl) == 0 && p[kl] == ':') {
			const char *v = p + kl + 1;
			size_t vl = ll - kl - 1;

			while (vl && *v == ' ') {
				v++;
				vl--;
			}
			if (vl)
				snprintf(val, len, "%.*s", (int)vl, v);
			return;
		}
		p = eol ? eol + 1 : NULL;
	}
}

/* Trailing whitespace off b. */
static void trim(struct buf *b)
{
	while (b->len && strchr(" \t\r\n", b->data[b->len - 1]))
		b->data[--b->len] = '\0';
}

static int status_one(struct source *s, const char *item, int json)
{
	struct buf b = { NULL, 0, 0 };
	char path[PATH_MAX];
	int r;

	snprintf(path, sizeof(path), "/%s/%s", item, json ? "status.json" : "status");
	r = source_read(s, path, &b);
	if (r == -ENOENT || r == -ENOTDIR) {
		buf_free(&b);
		return cli_fail("status", "%s: no such item", item);
	}
	if (r < 0) {
		buf_free(&b);
		return cli_fail("status", "%s: %s", item, strerror(-r));
	}
	trim(&b);
	printf("%s\n", b.data ? b.data : "");
	buf_free(&b);
	return 0;
}

/* The columns of the status table: name, width hint (a fraction of the
 * table's width below 1) and libsmartcols flags. One line per item, laid
 * out whole, then fitted to the terminal's width (print_fitted): the item
 * name and what runs are never cut, the evidence is cut to leave the last
 * error's heading room, and the last error, the last column, is cut with
 * "...". TEMPLATE and ROUTE (the path the plan chose, SPEC §5 "Routes and
 * templates") are there only when some item has one (optional). */
static const struct {
	const char *name, *key;
	double width;
	int flags, optional;
} columns[] = {
	{ "ITEM", NULL, 0, 0, 0 },
	{ "STATE", "state", 8, 0, 0 },
	{ "STAGE", "stage", 8, 0, 0 },
	{ "TEMPLATE", "template", 8, 0, 1 },
	{ "ROUTE", "route", 8, 0, 1 },
	{ "RUNNING", "running", 0.25, 0, 0 },
	{ "EVIDENCE", "evidence", 0.1, 0, 0 },
	{ "LAST ERROR", "last_error", 0.3, 0, 0 },
};
#define NCOLUMNS (sizeof(columns) / sizeof(columns[0]))

/* The width the table fits: the terminal's when stdout is one, else
 * $COLUMNS when set, else 80. */
static size_t table_width(void)
{
	struct winsize ws;
	const char *env = getenv("COLUMNS");
	char *end;
	long n;

	if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	if (env && *env) {
		n = strtol(env, &end, 10);
		if (*end == '\0' && n > 0 && n < 100000)
			return (size_t)n;
	}
	return 80;
}

/* Whether status text has a non-empty value of key (status_value shows
 * an empty one as "-"). */
static int has_value(const char *text, const char *key)
{
	char val[8];

	status_value(text, key, val, sizeof(val));
	return strcmp(val, "-") != 0;
}

/* Whether column i is in the table; shown[i] says so for the optional
 * ones. */
#define COLUMN_IN(i, shown) (!columns[i].optional || (shown)[i])

/* The columns s takes on a terminal: its UTF-8 characters (bytes that
 * begin one), each taken as one column. */
static size_t text_width(const char *s)
{
	size_t n = 0;

	for (; s && *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/* The column of the evidence (in columns[]), which is cut to leave the
 * last error room for its heading (as "0/4 vali"). */
#define EVIDENCE_COLUMN 6

/*
 * Cuts the evidence of every row of tb (to no less than its heading; it is
 * the table's column cell) by what the columns, at their widest, lack of
 * width for the last error's heading. 0 or -ENOMEM.
 */
static int fit_evidence(struct libscols_table *tb, size_t width, size_t cell)
{
	struct libscols_iter *it;
	struct libscols_line *ln;
	size_t need, least, keep, have;
	char cut[4096], *text = NULL, *ev, *last;
	int rc = 0;

	/* The heading line of the table laid out whole tells the widths. */
	if (scols_print_table_to_string(tb, &text) != 0 || !text)
		return -ENOMEM;
	need = strcspn(text, "\n");
	text[need] = '\0';
	ev = strstr(text, columns[EVIDENCE_COLUMN].name);
	last = strstr(text, columns[NCOLUMNS - 1].name);
	have = ev && last > ev ? (size_t)(last - ev) - 1 : 0;
	free(text);
	least = text_width(columns[EVIDENCE_COLUMN].name);
	if (need <= width || have <= least)
		return 0;
	keep = need - width < have - least ? have - (need - width) : least;
	it = scols_new_iter(SCOLS_ITER_FORWARD);
	if (!it)
		return -ENOMEM;
	while (rc == 0 && scols_table_next_line(tb, it, &ln) == 0) {
		const char *v = scols_cell_get_data(scols_line_get_cell(ln, cell));

		if (!v || strlen(v) <= keep || keep >= sizeof(cut))
			continue;
		snprintf(cut, keep + 1, "%s", v); /* ASCII: "3/4 validated" */
		if (scols_line_set_data(ln, cell, cut) != 0)
			rc = -ENOMEM;
	}
	scols_free_iter(it);
	return rc;
}

/* The width the table is laid out at: wider than any row. */
#define TABLE_WIDEST 100000

/*
 * Prints tb, laid out at its widest (nothing cut or wrapped), one line per
 * row, each line longer than width characters cut to width - 3 of them
 * and "..." (as ctl shows a long line): the last error, the last column,
 * is what goes; evidence_cell is the evidence's column of tb. 0 or -ENOMEM.
 */
static int print_fitted(struct libscols_table *tb, size_t width, size_t evidence_cell)
{
	char *text = NULL, *line, *next;
	size_t k, chars;
	int r;

	if ((r = fit_evidence(tb, width, evidence_cell)) < 0)
		return r;
	if (scols_print_table_to_string(tb, &text) != 0 || !text)
		return -ENOMEM;
	for (line = text; *line; line = next) {
		next = line + strcspn(line, "\n");
		if (*next)
			*next++ = '\0';
		if (width > 3 && text_width(line) > width) {
			for (k = 0, chars = 0; line[k]; k++)
				if (((unsigned char)line[k] & 0xc0) != 0x80 && ++chars == width - 2)
					break;
			printf("%.*s...\n", (int)k, line);
		} else {
			printf("%s\n", line);
		}
	}
	free(text);
	return 0;
}

/* The column of the tables of shown (see COLUMN_IN) that holds the
 * evidence. */
static size_t evidence_cell(const int *shown)
{
	size_t i, n = 0;

	for (i = 0; i < EVIDENCE_COLUMN; i++)
		n += COLUMN_IN(i, shown);
	return n;
}

/* A new table with the status columns (shown: see COLUMN_IN) into *out.
 * 0 or -ENOMEM. */
static int table_new(struct libscols_table **out, const int *shown)
{
	struct libscols_table *tb = scols_new_table();
	size_t i;

	*out = NULL;
	if (tb == NULL)
		return -ENOMEM;
	scols_table_enable_noencoding(tb, 1);
	scols_table_set_termforce(tb, SCOLS_TERMFORCE_ALWAYS);
	scols_table_set_termwidth(tb, TABLE_WIDEST); /* print_fitted fits it */
	for (i = 0; i < NCOLUMNS; i++) {
		if (COLUMN_IN(i, shown) && scols_table_new_column(tb, columns[i].name, columns[i].width,
					   columns[i].flags) == NULL) {
			scols_unref_table(tb);
			return -ENOMEM;
		}
	}
	*out = tb;
	return 0;
}

/* A row of tb for item from its status text. 0 or -ENOMEM. */
static int table_row(struct libscols_table *tb, const int *shown, const char *item,
		     const char *text)
{
	struct libscols_line *ln = scols_table_new_line(tb, NULL);
	char val[4096];
	size_t i, n = 0;

	if (ln == NULL)
		return -ENOMEM;
	for (i = 0; i < NCOLUMNS; i++) {
		if (!COLUMN_IN(i, shown))
			continue;
		if (columns[i].key)
			status_value(text, columns[i].key, val, sizeof(val));
		else
			snprintf(val, sizeof(val), "%s", item);
		/* A held item advances only by hand: its state says so. */
		if (columns[i].key && strcmp(columns[i].key, "state") == 0) {
			char hold[8];

			status_value(text, "hold", hold, sizeof(hold));
			if (strcmp(hold, "yes") == 0 && strlen(val) + 8 < sizeof(val))
				strcat(val, " (held)");
		}
		if (scols_line_set_data(ln, n++, val) != 0)
			return -ENOMEM;
	}
	return 0;
}

static int status_all(struct source *s, int json)
{
	struct libscols_table *tb = NULL;
	char **items = NULL, path[PATH_MAX];
	struct buf *texts = NULL;
	char *bad = NULL; /* bad[i]: item i's status could not be read */
	int shown[NCOLUMNS] = { 0 };
	size_t i, k, n = 0;
	int r = source_items(s, &items), rc = 0;

	/* Every status first: the optional columns are there when some
	 * item has a value for them. */
	for (i = 0; r == 0 && items && items[i]; i++)
		n++;
	if (r == 0 && n && (!(texts = calloc(n, sizeof(*texts))) || !(bad = calloc(n, 1))))
		r = -ENOMEM;
	if (r < 0) {
		free(texts);
		strv_free(items);
		return cli_fail("status", "%s", strerror(-r));
	}
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "/%s/%s", items[i], json ? "status.json" : "status");
		r = source_read(s, path, &texts[i]);
		if (r < 0) {
			rc = cli_fail("status", "%s: %s", items[i], strerror(-r));
			buf_free(&texts[i]);
			bad[i] = 1;
			continue;
		}
		trim(&texts[i]);
		for (k = 0; !json && k < NCOLUMNS; k++)
			if (columns[k].optional && texts[i].data && has_value(texts[i].data,
									    columns[k].key))
				shown[k] = 1;
	}
	if (!json && (r = table_new(&tb, shown)) < 0) {
		for (i = 0; i < n; i++)
			buf_free(&texts[i]);
		free(texts);
		free(bad);
		strv_free(items);
		return cli_fail("status", "%s", strerror(-r));
	}
	if (json)
		printf("[");
	for (i = 0; i < n; i++) {
		struct buf *b = &texts[i];

		if (bad[i])
			continue; /* said above */
		if (json)
			printf("%s%s", i ? ",\n" : "\n", b->data ? b->data : "{}");
		else if ((r = table_row(tb, shown, items[i], b->data ? b->data : "")) < 0)
			rc = cli_fail("status", "%s: %s", items[i], strerror(-r));
		buf_free(b);
	}
	free(texts);
	free(bad);
	if (json)
		printf("%s]\n", items ? "\n" : "");
	else if (items && (r = print_fitted(tb, table_width(), evidence_cell(shown))) < 0)
		rc = cli_fail("status", "%s", strerror(-r));
	scols_unref_table(tb);
	strv_free(items);
	return rc;
}

int cli_status(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		CLI_OPTIONS_END,
	};
	struct source s = { NULL, NULL };
	const char *target, *item;
	char path[PATH_MAX], store[PATH_MAX];
	int c, json = 0, rc;

	cli_opts_reset();
	while ((c = cli_next_option("status", argc, argv, ":h", longopts, &rc)) == 'j')
		json = 1;
	if (c == CLI_OPT_EXIT ||
	    (rc = cli_operands("status", argc, 1, 2, "missing STORE or MOUNTPOINT")))
		return rc;
	target = argv[optind];
	item = argc - optind == 2 ? argv[optind + 1] : NULL;
	if (item && (item[0] == '\0' || strchr(item, '/')))
		return cli_fail("status", "%s: no such item", item);
	if (cli_mtab_path(target, path) == 0 && cli_mtab_dead(path, store, sizeof(store)))
		return cli_fail("status", "%s: the daemon of this mount (store %s) is gone; "
				"`packetfs mount %s %s` mounts the store again (replacing the "
				"dead mount), `packetfs umount %s` removes it",
				target, store, store, target, target);
	if (cli_is_mount(target))
		s.root = target;
	else if (cli_open_readonly("status", target, &s.engine) != 0)
		return 1;
	rc = item ? status_one(&s, item, json) : status_all(&s, json);
	engine_close(s.engine);
	return rc;
}
