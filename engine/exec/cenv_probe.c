/*
 * cenv_probe.c - compute-env.md's questions (cenv_probe.h).
 *
 * Design: the host is read as a recipe run's log header is (runenv_local,
 * then its script for nvidia-smi, runenv_parse of the whole block), so
 * that the facts and their cleaning are the same in both places. Every
 * program runs through capture_exec: a deadline, its process group
 * killed past it, reaped by its pid.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "cenv_probe.h"
#include "capture.h"

#define OUTPUT_MAX 65536 /* bytes of a program's output kept */
#define ANSWER_CUT 300   /* bytes of an answer */

/* The first line of s that is not blank, trimmed, cut to ANSWER_CUT, as a
 * fresh string ("" when none), or NULL on ENOMEM. */
static char *first_line(const char *s)
{
	const char *p = s ? s : "";

	while (*p) {
		size_t n = strcspn(p, "\n"), a = 0, b = n;

		while (a < n && (unsigned char)p[a] <= ' ')
			a++;
		while (b > a && (unsigned char)p[b - 1] <= ' ')
			b--;
		if (b > a)
			return strndup(p + a, b - a > ANSWER_CUT ? ANSWER_CUT : b - a);
		p += n + (p[n] == '\n');
	}
	return strdup("");
}

int cenv_probe_host(char **json)
{
	struct buf block, script;
	int rc;

	*json = NULL;
	buf_init(&block);
	buf_init(&script);
	rc = runenv_local(NULL, getenv("PATH"), &block, &script);
	if (rc == 0 && script.len) {
		char *argv[] = { (char *)"sh", (char *)"-c", script.data, (char *)RUNENV_ARG0, NULL };
		struct capture c = { .argv = argv, .timeout_ms = CENV_HOST_TIMEOUT_MS,
				     .max = OUTPUT_MAX };

		if (capture_exec(&c) >= 0 && c.out)
			rc = buf_append(&block, c.out, c.len);
		free(c.out);
	} else if (rc == 1) {
		rc = 0;
	}
	if (rc == 0) {
		rc = runenv_parse(block.data ? block.data : "", block.len, json);
		if (rc == -ENOENT)
			rc = (*json = strdup("{}")) ? 0 : -ENOMEM;
	}
	buf_free(&block);
	buf_free(&script);
	return rc;
}

/* Why a program that did not exit 0 gave no answer, into *why. */
static int why_not(int rc, const struct capture *c, int timeout_s, char **why)
{
	char text[ANSWER_CUT + 64], *line;

	if (rc == -ENOENT)
		snprintf(text, sizeof(text), "not on PATH");
	else if (rc == -ETIMEDOUT)
		snprintf(text, sizeof(text), "timed out after %d s", timeout_s);
	else if (rc < 0)
		snprintf(text, sizeof(text), "cannot start: %s", strerror(-rc));
	else if (WIFSIGNALED(c->status))
		snprintf(text, sizeof(text), "killed by signal %d", WTERMSIG(c->status));
	else if ((line = first_line(c->out)) != NULL) {
		snprintf(text, sizeof(text), "exit %d%s%s", WEXITSTATUS(c->status), line[0] ? ": " : "",
			 line);
		free(line);
	} else {
		return -ENOMEM;
	}
	*why = strdup(text);
	return *why ? 0 : -ENOMEM;
}

int cenv_probe_sinfo(char **rows, char **error)
{
	char *argv[] = { (char *)"sinfo", (char *)"--noheader", (char *)"--format=" CENV_SINFO_FORMAT,
			 NULL };
	struct capture c = { .argv = argv, .err = PROC_OUT_STDOUT, .timeout_ms = CENV_SINFO_TIMEOUT_MS,
			     .max = OUTPUT_MAX };
	int rc = capture_exec(&c);

	*rows = *error = NULL;
	if (rc == 0 && WIFEXITED(c.status) && WEXITSTATUS(c.status) == 0) {
		*rows = c.out;
		return 0;
	}
	rc = why_not(rc, &c, CENV_SINFO_TIMEOUT_MS / 1000, error);
	free(c.out);
	return rc;
}

enum cenv_answer cenv_probe_run(char *const *argv, int timeout_s, char **text)
{
	struct capture c = { .argv = argv, .err = PROC_OUT_STDOUT, .timeout_ms = timeout_s * 1000,
			     .max = OUTPUT_MAX };
	int rc = capture_exec(&c);
	enum cenv_answer a;

	*text = NULL;
	if (rc == -ETIMEDOUT) {
		a = CENV_TIMED_OUT;
	} else if (rc == 0 && WIFEXITED(c.status) && WEXITSTATUS(c.status) == 0) {
		*text = first_line(c.out);
		a = *text ? CENV_PRESENT : CENV_PENDING;
	} else {
		a = why_not(rc, &c, timeout_s, text) ? CENV_PENDING : CENV_ABSENT;
	}
	free(c.out);
	return a;
}
