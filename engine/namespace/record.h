/*
 * record.h - the lines of an item's validation/record, the recorder's
 * transaction file (SPEC §6 "The recorder"; docs/guide.md "Recording a run"):
 * what a line asks and whether a fragment can still become a line. The
 * file itself (its handles and answers) is record.c's, through
 * packet_int.h.
 *
 * A line is one of:
 *	{"recipe": "01-build", "argv": ["make", "-j2"], "gpus": 1, "timeout_s": 600}
 *	    a request: run argv as a run of the catalog recipe; gpus and
 *	    timeout_s are optional (absent or null: the recipe's own)
 *	cancel
 *	    cancel the run the handle's answer names
 * Blank lines are ignored. Nothing here touches the engine: any thread.
 */
#ifndef PACKETFS_RECORD_H
#define PACKETFS_RECORD_H

#include <stddef.h>

/* The longest line, newline excluded: longer ones are refused (-EFBIG). */
#define RECORD_LINE_MAX (64 * 1024)
/* The most GPUs and seconds a request may name (the engine may allow fewer). */
#define RECORD_GPUS_MAX 1024
/* The longest credential a request may present (the engine's are 32 hex
 * digits). */
#define RECORD_CREDENTIAL_MAX 128
#define RECORD_TIMEOUT_MAX (365 * 24 * 3600)

/* What a request line asks. */
struct record_request {
	char *recipe;   /* the recipe name, as given */
	char **argv;    /* the command, NULL-terminated (strv), argv[0] non-empty */
	int gpus;       /* 0..RECORD_GPUS_MAX, or -1: the recipe's */
	int timeout_s;  /* 0 (none)..RECORD_TIMEOUT_MAX, or -1: the recipe's */
	char *credential; /* the asker's $PACKET_RUN_CREDENTIAL, or NULL: none given */
};

enum record_line_kind {
	RECORD_BLANK,   /* only spaces, tabs and CRs */
	RECORD_CANCEL,  /* the word cancel, spaces around it allowed */
	RECORD_REQUEST, /* anything else: to be parsed as a request */
};

/* What kind of line the len bytes at s are (no newline; need not be
 * NUL-terminated). */
enum record_line_kind record_line_kind(const char *s, size_t len);

/*
 * Parses the request line s[len] (no newline; need not be NUL-terminated)
 * into *out (record_request_clear it after a 0 return; nothing to clear
 * otherwise). 0; -EINVAL with the reason in why (not JSON, not an object,
 * an unknown or repeated member, recipe or argv missing or of the wrong
 * type, an empty command, gpus or timeout_s not a whole number in range, a
 * credential that is not a string of 1 to RECORD_CREDENTIAL_MAX bytes, a
 * NUL character); -EFBIG (longer than RECORD_LINE_MAX); -ENOMEM.
 */
int record_parse(const char *s, size_t len, struct record_request *out, char *why, size_t whysize);

/* Frees what a parsed request owns; clearing twice is allowed. */
void record_request_clear(struct record_request *r);

/*
 * Whether the fragment s[len] (no newline) may still become a whole line
 * as more bytes come, so that a flush keeps it waiting: blank, a strict
 * prefix of "cancel", or JSON text with an object, array or string still
 * open (garbage inside an open object is kept too: it is refused when the
 * line ends or the file is closed).
 */
int record_line_open(const char *s, size_t len);

#endif
