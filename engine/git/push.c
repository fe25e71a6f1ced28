/*
 * push.c - the environment of a publish's `git push` and the reason a
 * failed one gives (see push.h).
 *
 * push_reason reads git's output line by line (a line ends at \n or \r; ssh
 * ends its own with \r\n). It looks for the strongest evidence first, not
 * the first line: a --porcelain "!" line means the transport worked and the
 * remote refused the update; then authentication, the host key, the
 * connection and the repository, in that order, because git follows each of
 * those with the same generic "Could not read from remote repository".
 * Nothing here allocates or touches global state.
 */
#include <stdio.h>
#include <string.h>

#include "push.h"
#include "util.h"

/* ---- environment ---- */

/* Whether var (NAME=value) is named by one of the NULL-terminated names. */
static int named(const char *var, const char *const *names)
{
	size_t n;

	for (; *names; names++) {
		n = strlen(*names);
		if (strncmp(var, *names, n) == 0 && var[n] == '=')
			return 1;
	}
	return 0;
}

char **push_env(char *const *env)
{
	static const char *const drop[] = {
		"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
		"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "GIT_NAMESPACE", "GIT_PREFIX",
		"GIT_TERMINAL_PROMPT", "LC_ALL", "LANGUAGE", "LC_MESSAGES", NULL
	};
	static const char *const ctype[] = { "LC_CTYPE", NULL };
	const char *lc_all = NULL;
	char **out = NULL, var[512];
	int has_ctype = 0, rc = 0;
	size_t i;

	for (i = 0; env && env[i]; i++) {
		if (strncmp(env[i], "LC_ALL=", 7) == 0)
			lc_all = env[i] + 7;
		if (named(env[i], ctype))
			has_ctype = 1;
		if (named(env[i], drop) || strncmp(env[i], "PACKET_", 7) == 0 ||
		    strncmp(env[i], "RECIPE_", 7) == 0)
			continue;
		rc |= strv_push(&out, env[i]);
	}
	/* LC_ALL set the character set too: that much of it stays. */
	if (lc_all && lc_all[0] && !has_ctype && strlen(lc_all) < sizeof(var) - 10) {
		snprintf(var, sizeof(var), "LC_CTYPE=%s", lc_all);
		rc |= strv_push(&out, var);
	}
	rc |= strv_push(&out, "LC_MESSAGES=C");
	rc |= strv_push(&out, "GIT_TERMINAL_PROMPT=0");
	if (rc) {
		strv_free(out);
		return NULL;
	}
	return out;
}

/* ---- reasons ---- */

/* One line of output: start and length (no line end). */
struct line {
	const char *s;
	size_t n;
};

/* The line of text holding needle (the first), or NULL. */
static const struct line *find(const struct line *lines, size_t nlines, const char *needle,
			       size_t *at)
{
	size_t i, k, m = strlen(needle);

	for (i = 0; i < nlines; i++) {
		for (k = 0; k + m <= lines[i].n; k++) {
			if (memcmp(lines[i].s + k, needle, m) == 0) {
				if (at)
					*at = k;
				return &lines[i];
			}
		}
	}
	return NULL;
}

/* Copies the n bytes at s into out (size > 0), cut to fit. */
static void copy(char *out, size_t size, const char *s, size_t n)
{
	if (n >= size)
		n = size - 1;
	memcpy(out, s, n);
	out[n] = '\0';
}

/* The text of line l after a leading "fatal: ", "error: " or "ssh: ", and
 * without a final '.', into out. */
static void message(const struct line *l, char *out, size_t size)
{
	static const char *const prefixes[] = { "fatal: ", "error: ", "ssh: ", NULL };
	const char *s = l->s;
	size_t n = l->n, k;

	for (k = 0; prefixes[k]; k++) {
		size_t m = strlen(prefixes[k]);

		if (n >= m && memcmp(s, prefixes[k], m) == 0) {
			s += m;
			n -= m;
			break;
		}
	}
	while (n > 0 && (s[n - 1] == '.' || s[n - 1] == ' '))
		n--;
	copy(out, size, s, n);
}

/* The text between the quote after offset at of line l and the next one
 * ('URL'), into out; 0, or -1 when there is none. */
static int quoted(const struct line *l, size_t at, char *out, size_t size)
{
	const char *a = memchr(l->s + at, '\'', l->n - at), *b;

	if (!a)
		return -1;
	a++;
	b = memchr(a, '\'', (size_t)(l->s + l->n - a));
	if (!b)
		return -1;
	copy(out, size, a, (size_t)(b - a));
	return 0;
}

/* Whether a remote as the pipeline names it is a plain name (no path, no URL). */
static int plain_name(const char *remote)
{
	return remote[0] != '.' && !strchr(remote, '/') && !strchr(remote, ':');
}

/* Porcelain: "!<TAB>from:to<TAB>[rejected] (reason)" for a refused ref. */
static const struct line *rejected(const struct line *lines, size_t nlines)
{
	size_t i;

	for (i = 0; i < nlines; i++)
		if (lines[i].n > 2 && lines[i].s[0] == '!' && lines[i].s[1] == '\t')
			return &lines[i];
	return NULL;
}

#define MAX_LINES 512

enum push_kind push_reason(const char *remote, const char *branch, const char *output,
			   int exit_code, char *why, size_t size)
{
	static const char *const auth[] = {
		"Authentication failed for ", "could not read Username for ",
		"could not read Password for ", "Permission denied (", "Permission denied, please",
		"The requested URL returned error: 401", "The requested URL returned error: 403",
		NULL
	};
	static const char *const unreachable[] = {
		"Could not resolve host", "Couldn't connect to server", "Failed to connect to",
		"Connection refused", "No route to host", "Network is unreachable",
		"Connection timed out", "Operation timed out", "Connection reset by peer",
		"Connection closed by", "unable to access '", NULL
	};
	struct line lines[MAX_LINES];
	const struct line *l;
	size_t nlines = 0, at = 0, k;
	const char *s = output ? output : "";
	char text[512];

	if (size == 0)
		return exit_code ? PUSH_OTHER : PUSH_OK;
	why[0] = '\0';
	if (exit_code == 0)
		return PUSH_OK;
	while (*s && nlines < MAX_LINES) {
		size_t n = strcspn(s, "\r\n");

		if (n > 0) {
			lines[nlines].s = s;
			lines[nlines].n = n;
			nlines++;
		}
		s += n;
		s += strspn(s, "\r\n");
	}

	/* The transport worked and the remote (or git) refused the ref. */
	if ((l = rejected(lines, nlines))) {
		const char *sum = memchr(l->s + 2, '\t', l->n - 2);
		size_t n = sum ? (size_t)(l->s + l->n - ++sum) : 0;

		if (sum && (find(l, 1, "(non-fast-forward)", NULL) || find(l, 1, "(fetch first)", NULL))) {
			snprintf(why, size, "push to %s refused: non-fast-forward (the remote's %s has "
				 "commits the item branch lacks)", remote, branch);
			return PUSH_NONFF;
		}
		copy(text, sizeof(text), sum ? sum : l->s, sum ? n : l->n);
		snprintf(why, size, "push to %s refused: %s", remote, text);
		return PUSH_REJECTED;
	}
	for (k = 0; auth[k]; k++) {
		if (!(l = find(lines, nlines, auth[k], &at)))
			continue;
		if (k == 0 && quoted(l, at, text, sizeof(text)) == 0)
			snprintf(why, size, "push to %s refused: authentication failed (%s)", remote, text);
		else if (k < 3 && quoted(l, at, text, sizeof(text)) == 0)
			snprintf(why, size, "push to %s refused: authentication failed (no username or "
				 "password for %s: no credential helper gave one)", remote, text);
		else {
			message(l, text, sizeof(text));
			snprintf(why, size, "push to %s refused: authentication failed (%s)", remote, text);
		}
		return PUSH_AUTH;
	}
	if ((l = find(lines, nlines, "Host key verification failed", NULL)) ||
	    (l = find(lines, nlines, "REMOTE HOST IDENTIFICATION HAS CHANGED", NULL))) {
		message(l, text, sizeof(text));
		snprintf(why, size, "push to %s failed: the remote's host key is not trusted (%s)",
			 remote, text);
		return PUSH_HOSTKEY;
	}
	for (k = 0; unreachable[k]; k++) {
		if (!(l = find(lines, nlines, unreachable[k], NULL)))
			continue;
		message(l, text, sizeof(text));
		snprintf(why, size, "push to %s failed: remote unreachable (%s)", remote, text);
		return PUSH_UNREACHABLE;
	}
	if ((l = find(lines, nlines, "does not appear to be a git repository", NULL)) &&
	    quoted(l, 0, text, sizeof(text)) == 0) {
		if (strcmp(text, remote) == 0 && plain_name(remote)) {
			snprintf(why, size, "push to %s failed: no such remote", remote);
			return PUSH_NO_REMOTE;
		}
		snprintf(why, size, "push to %s failed: remote unreachable (no git repository at %s)",
			 remote, text);
		return PUSH_UNREACHABLE;
	}
	if ((l = find(lines, nlines, "fatal: repository '", &at)) && find(l, 1, "' not found", NULL) &&
	    quoted(l, at, text, sizeof(text)) == 0) {
		snprintf(why, size, "push to %s failed: remote unreachable (no git repository at %s)",
			 remote, text);
		return PUSH_UNREACHABLE;
	}
	/* Anything else: git's first fatal or error line says it best. */
	for (k = 0; k < nlines; k++) {
		l = &lines[k];
		if ((l->n > 7 && memcmp(l->s, "fatal: ", 7) == 0) ||
		    (l->n > 7 && memcmp(l->s, "error: ", 7) == 0 &&
		     !find(l, 1, "failed to push some refs", NULL))) {
			message(l, text, sizeof(text));
			snprintf(why, size, "push to %s failed: %s", remote, text);
			return PUSH_OTHER;
		}
	}
	if ((l = find(lines, nlines, "error: ", &at)) && at == 0) {
		message(l, text, sizeof(text));
		snprintf(why, size, "push to %s failed: %s", remote, text);
	} else {
		snprintf(why, size, "push to %s failed: git push exited with code %d", remote, exit_code);
	}
	return PUSH_OTHER;
}
