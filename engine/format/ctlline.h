/*
 * ctlline.h - the syntax of the command lines of an item's trigger file
 * ctl (SPEC §4): which verb, whether it takes a stage or a recipe name,
 * what may stand in a line, and which fragments can still become a line.
 * Whether a named stage or recipe exists, and whether the item's state
 * allows the command, is the namespace's check (engine/namespace/ctl.c).
 * Pure functions of their arguments: any thread.
 *
 * A line is at most CTL_LINE_MAX bytes, newline excluded, of words
 * separated by spaces, tabs or a CR; any other control character (NUL
 * included) or DEL refuses it. The first word is the verb: advance, run
 * STAGE, rerun RECIPE (or rerun failed), cancel, approve, hold, release,
 * archive, probe.
 */
#ifndef PACKETFS_CTLLINE_H
#define PACKETFS_CTLLINE_H

#include <stddef.h>

/* The longest command line, newline excluded. */
#define CTL_LINE_MAX 4096

/* What a verb's one argument names. */
enum ctl_arg {
	CTL_ARG_NONE,   /* the verb takes no argument */
	CTL_ARG_STAGE,  /* run */
	CTL_ARG_RECIPE, /* rerun */
};

struct ctl_line {
	const char *verb;   /* a static string: one of the verbs above */
	enum ctl_arg kind;  /* what the argument names */
	const char *arg;    /* the argument (CTL_ARG_STAGE, _RECIPE): points into the line, */
	size_t arg_len;     /* not NUL-terminated; arg_len > 0 */
};

/*
 * Parses the line s[len] (no newline; need not be NUL-terminated) into
 * *out. Returns 0, or -EINVAL with the reason, NUL-terminated, in why[size]
 * (cut to fit): too long, a control character (its byte given), empty,
 * unknown verb (with the verb it likely meant: 'unknown verb (did you mean
 * "advance"?)'), an argument missing or too many.
 */
int ctl_line_parse(const char *s, size_t len, struct ctl_line *out, char *why, size_t size);

/* ctl_line_prefix's answers. */
enum ctl_prefix {
	CTL_PREFIX_NO,   /* no more bytes can make s a valid line */
	CTL_PREFIX_YES,  /* blank, a strict prefix of a verb, or run/rerun with the name to come */
	CTL_PREFIX_NAME, /* run/rerun and a name that may still grow: *out has the verb, kind,
			    and the name so far in arg, arg_len, for the caller to match */
};

/* Whether the fragment s[len] (no newline) can still become a valid line
 * as more bytes come, by its syntax alone (a name is the caller's to
 * match). */
enum ctl_prefix ctl_line_prefix(const char *s, size_t len, struct ctl_line *out);

/* The name of known (n names) that word (NUL-terminated) is likely a slip
 * of: the nearest by edits (a swap of two neighbours counts one), at most
 * 2 and at most a third of word's length - as pipeline.json's "did you
 * mean" picks. NULL when none is that near. */
const char *ctl_line_suggest(const char *word, const char *const *known, size_t n);

/* Whether the len bytes at s are all spaces, tabs or CRs (also when len is 0). */
int ctl_line_blank(const char *s, size_t len);

/* Copies the line s[len] into out[size] (size >= 5) for showing it: outer
 * spaces trimmed, control characters as '?', cut to 60 bytes with "...". */
void ctl_line_shown(const char *s, size_t len, char *out, size_t size);

#endif
