/*
 * recipe_int.h - what the recipe files share: recipe.c (the catalog) and
 * recipe_plan.c (plan.md and the stage documents). Not for the rest of
 * the engine: recipe.h is the contract. Thread-safe (no shared state).
 */
#ifndef PACKETFS_RECIPE_INT_H
#define PACKETFS_RECIPE_INT_H

#include <stddef.h>

/* A growing list of strings, NULL-terminated once v is not NULL (strv_free
 * frees it). Zero-initialise it before use. */
struct recipe_names {
	char **v;
	size_t n, cap;
};

/* Appends s, which the list takes (freed here on failure). 0 or -ENOMEM. */
int recipe__names_take(struct recipe_names *l, char *s);

/*
 * Drops from the list every string equal to an earlier one (freeing it),
 * keeping the order of the others, in O(n log n). 0, or -ENOMEM with the
 * list unchanged.
 */
int recipe__names_dedupe(struct recipe_names *l);

/* A walk over the lines of a Markdown text that tells fenced code blocks
 * (recipe_plan.c's design note) from the text around them. Start it as
 * { text, text + len, 0, 0 }. */
struct md_walk {
	const char *p, *end; /* the lines not walked yet */
	char ch;             /* the open block's fence character; 0: outside blocks */
	size_t count;        /* the open block's fence length */
};

enum md_line {
	MD_TEXT,  /* a line outside fenced blocks */
	MD_OPEN,  /* a fence that opens a block */
	MD_CODE,  /* a line inside a block */
	MD_CLOSE, /* the fence that closes it */
};

/* The next line of w: [*s, *e) without its newline, and what it is (for
 * MD_OPEN the info word is [*info, *info_end)); -1 at the end of the text.
 * Each call walks exactly one line. */
int recipe__md_next(struct md_walk *w, const char **s, const char **e, const char **info,
		    const char **info_end);

#endif
