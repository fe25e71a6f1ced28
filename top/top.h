/*
 * top.h - the parts of `packetfs top` (cli_top.c): the model of the items
 * it shows (top_model.c) and the text of a frame (top_render.c).
 *
 * The model is one array of items sorted by name, each holding what its
 * status.json said when it was last read: state, stage, what runs (each
 * run's name and the time it started, so elapsed times advance without a
 * read), evidence and last error. An item is read again only when a change
 * notification names it (its `dirty` mark); a frame is rendered from the
 * model alone. Nothing here draws on a terminal: a frame is lines of text
 * of a given width, which cli_top.c hands to ncurses or prints (--once).
 *
 * Threads: `packetfs top` is single-threaded; every function here runs on
 * the main thread.
 */
#ifndef PACKETFS_TOP_H
#define PACKETFS_TOP_H

#include <stddef.h>
#include <stdint.h>

#include "engine.h"

/* The states an item can be in (SPEC §4), in the header's order. */
#define TOP_NSTATES 7
extern const char *const top_states[TOP_NSTATES];

/* At most this many runs of one item are kept (the rest are counted). */
#define TOP_MAX_RUNS 4

/* One thing that runs for an item: a stage or a recipe. */
struct top_run {
	char name[64];
	int64_t start_ms;  /* CLOCK_MONOTONIC milliseconds when it started */
};

struct top_item {
	char *name;                 /* malloc'd; the item's directory name */
	char state[16];             /* "" until read */
	char stage[64];
	char template[64];          /* the template the plan chose, "" when none */
	char evidence[32];          /* "3/4" */
	char *last_error;           /* malloc'd, "" when none */
	struct top_run runs[TOP_MAX_RUNS];
	int nruns;                  /* runs kept */
	int more_runs;              /* runs beyond TOP_MAX_RUNS */
	int hold;                   /* status.json "hold" */
	int error;                  /* the last read's -errno, 0 when it read */
	int wd;                     /* its inotify watch; -1: none yet, -2: refused */
	int dirty;                  /* a notification named it since it was read */
};

struct top_model {
	char *root;                 /* the mount point, malloc'd */
	struct top_item *items;     /* sorted by name */
	size_t n, cap;
	int name_w, stage_w;        /* the longest name and stage (columns) */
	int template_w;             /* the longest template, 0 when no item has
				     * one (then there is no TEMPLATE column) */
};

/* Milliseconds of CLOCK_MONOTONIC. */
int64_t top_now_ms(void);

/* Sets up m for the mount at root (copied). 0 or -ENOMEM. */
int top_model_init(struct top_model *m, const char *root);

/* Frees what m holds (not m itself); m may be zeroed or half set up. */
void top_model_free(struct top_model *m);

/*
 * Lists the items of the mount (the directories of its root but those whose
 * name starts with '.' and those the root itself uses, learnings/),
 * replacing what m held. With read set, reads each one's status now (a
 * directory without status.json is no item and is left out; items whose
 * status can not be read stay with their error); without, marks each for
 * a read (top_watch_read), so that a screen shows before thousands are
 * read. Returns 0, or -errno when the root can not be listed (m is then
 * empty).
 */
int top_model_load(struct top_model *m, int read);

/* The index of the item called name, or -1. */
long top_model_find(const struct top_model *m, const char *name);

/*
 * Reads item name's status.json again (adding the item when it is new to
 * m). Returns its index, or -errno: -ENOENT when it is no item (any more:
 * the caller drops it with top_model_drop, which gives back its watch),
 * -ENOMEM. An item whose status reads
 * otherwise wrong keeps its last values and the error. The caller re-finds
 * indexes it held: the array may move.
 */
long top_model_refresh(struct top_model *m, const char *name);

/* Drops the item called name from m, if there. Returns its inotify watch
 * descriptor (which the caller removes) or what stood for none (-1, -2;
 * -1 also when there is no such item). */
int top_model_drop(struct top_model *m, const char *name);

/* The index of the item whose inotify watch is wd, or -1. */
long top_model_find_wd(const struct top_model *m, int wd);

/*
 * Fills it from the text of a status.json (the JSON object of SPEC §4 as
 * the mount renders it; now_ms: when it was read, so "plan (12 s)" started
 * 12 s before). Returns 0, or -EINVAL when text is no JSON object (it is
 * then unchanged), -ENOMEM.
 */
int top_item_parse(struct top_item *it, const char *text, int64_t now_ms);

/* The count of items in each state of top_states, into counts; items in
 * no known state add to *other. */
void top_model_counts(const struct top_model *m, size_t counts[TOP_NSTATES], size_t *other);

/* --- frames (top_render.c) --- */

/*
 * Writes into out (size bytes, at least 1) at most width display columns of
 * s, replacing control characters and bytes that are no valid character in
 * the locale by '?', padded with spaces to exactly width columns when pad
 * is set. Returns the columns written.
 */
int top_fit(char *out, size_t size, const char *s, int width, int pad);

/* "12s", "3m04s", "2h05m", "3d04h" for secs seconds, into out (16 bytes). */
void top_elapsed(char *out, int64_t secs);

/* The header line: "packetfs top MNT  N items: 2 running, 1 failed ...
 * HH:MM:SS" (now: wall-clock time), fitted to width. */
void top_render_header(const struct top_model *m, int64_t now, int width, char *out, size_t size);

/* The line naming the columns, fitted to width. */
void top_render_columns(const struct top_model *m, int width, char *out, size_t size);

/* The row of item i (its elapsed times at now_ms), fitted to width;
 * selected: it starts with "> " (else two blanks). */
void top_render_row(const struct top_model *m, size_t i, int64_t now_ms, int width, int selected,
		    char *out, size_t size);

/* --- change notifications (top_watch.c) --- */

/*
 * What keeps the model current: one inotify instance watching the mount's
 * root (IN_CREATE and IN_MOVED_TO of a directory: a new item; IN_DELETE
 * and IN_MOVED_FROM: an item archived; IN_MODIFY of `events`) and each
 * item's directory (IN_MODIFY and IN_CLOSE_WRITE of status.json), and the
 * root `events` file, read from where it ended at the start: each new line
 * names the item it is about. An item a notification names is read again.
 */
struct top_watch {
	int fd;                 /* the inotify instance, -1: none */
	int root_wd;
	int events_fd;          /* MNT/events, -1: none */
	uint64_t events_off;    /* bytes of it taken */
	struct buf rest;        /* a line of it not complete yet */
	size_t unwatched;       /* watches refused (the watch limit) */
	int unwatched_err;      /* why (positive errno) */
};

/* Starts watching the root of m's mount and takes the end of its events
 * file, before m is loaded (so no change falls between). 0 or -errno. */
int top_watch_start(struct top_watch *w, const struct top_model *m);

/*
 * Takes what the inotify instance has (none: returns at once) and reads the
 * events file on, marking the items they name for top_watch_read; an item
 * new to the model is read at once, one gone is dropped.
 * Returns 1 when the model changed, 0 when not, or -errno: -ENODEV when the
 * mount went away (its root watch ended), -ENOTCONN or -ECONNABORTED when
 * its daemon did, -ENOMEM, another read(2) error of the events file.
 */
int top_watch_drain(struct top_watch *w, struct top_model *m);

/*
 * Reads again the marked items (top_item.dirty) of m: those of the rows
 * first..first+n-1 (the screen's), then the others from the top, at most
 * max in all. An item without a watch gets one first; one that can not be
 * had (ENOSPC: the limit of watches) is counted in w->unwatched, and that
 * item is then followed through the events file only. Returns 1 when one
 * was read, 0 when none, or -ENOMEM.
 */
int top_watch_read(struct top_watch *w, struct top_model *m, size_t first, size_t n, size_t max);

/* Whether an item of m is marked: 1 or 0. */
int top_model_unread(const struct top_model *m);

/* Whether the mount still answers: 0, or -errno (-ENOTCONN or
 * -ECONNABORTED: its daemon is gone; unmounted, inotify says so). Asks the daemon once (statfs), reads
 * nothing. */
int top_watch_alive(const struct top_watch *w);

/* Closes what w holds; w may be half set up. */
void top_watch_stop(struct top_watch *w);

#endif
