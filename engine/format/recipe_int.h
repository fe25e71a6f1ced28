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

#endif
