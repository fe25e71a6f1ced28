/*
 * strkit.c - implementation of the helpers declared in strkit.h.
 */
#include "strkit.h"

#include <ctype.h>
#include <string.h>

char *str_trim(char *s)
{
	size_t len = strlen(s);
	size_t start = 0;

	while (start < len && isspace((unsigned char)s[start]))
		start++;
	while (len > start && isspace((unsigned char)s[len - 1]))
		len--;
	memmove(s, s + start, len - start);
	s[len - start] = '\0';
	return s;
}

size_t str_count_char(const char *s, char c)
{
	size_t n = 0;

	if (c == '\0')
		return 0;
	for (; *s != '\0'; s++)
		if (*s == c)
			n++;
	return n;
}

bool str_starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}
