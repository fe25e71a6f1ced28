/*
 * strkit.h - small string helpers.
 *
 * Every function takes NUL-terminated strings. None allocates memory; the
 * ones that modify a string do so in place and never write past its end.
 */
#ifndef STRKIT_H
#define STRKIT_H

#include <stdbool.h>
#include <stddef.h>

/* Removes leading and trailing white space from s in place; returns s. */
char *str_trim(char *s);

/* Number of occurrences of c in s (0 for c == '\0'). */
size_t str_count_char(const char *s, char c);

/* true when s begins with prefix (every string begins with ""). */
bool str_starts_with(const char *s, const char *prefix);

#endif
