/*
 * slurm_parse.c - reading Slurm's answers (slurm.h): a line of
 * `scontrol -o -d show job` (slurm_parse_job), a line of squeue's
 * SLURM_QUEUE_FORMAT (slurm_parse_queue), Slurm's final job states
 * (slurm_state_final), and the job of an output file among all that
 * `scontrol -o show job` shows (slurm_find_job_by_output, for crash
 * recovery, run through capture_run under a deadline), and a job ended by
 * its id (slurm_cancel_job, for crash recovery too). No libuv: the poller and the submission are slurm.c's.
 *
 * Sources: squeue(1) --Format and "JOB STATE CODES", scontrol(1) "show
 * job" output, of Slurm 22.05; tests/unit/test-slurm.c holds lines that
 * Slurm printed.
 *
 * Numbers are read digit by digit and saturate (counts and codes at
 * INT_MAX, run times at SLURM_RUN_S_MAX), never overflow: a run time too
 * large to hold reads as the longest one, past every timeout, not as a
 * negative or wrapped one that no timeout would ever reach.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture.h"
#include "slurm.h"

/* The most of `scontrol -o show job` read (a line a job). */
#define SCONTROL_OUTPUT_MAX (64u << 20)

/* The value of the first word "KEY=value" of line (words are separated by
 * spaces; the value ends at a space or newline) into out. One pass over
 * the words, whatever the line holds. */
static int field(const char *line, const char *key, char *out, size_t size)
{
	size_t kl = strlen(key), n;
	const char *p;

	for (p = line;; p++) {
		if (strncmp(p, key, kl) == 0 && p[kl] == '=') {
			p += kl + 1;
			n = strcspn(p, " \n");
			snprintf(out, size, "%.*s", n < size ? (int)n : (int)size, p);
			return 0;
		}
		p = strchr(p, ' ');
		if (!p)
			return -ENOENT;
	}
}

/* Where digits() saturates: far below what its callers' sums overflow. */
#define DIGITS_MAX 1000000000000LL

/* The decimal digits at s as a number saturated at DIGITS_MAX, with *end
 * past the last of them; -1 (and *end = s) when s starts with no digit. */
static long long digits(const char *s, const char **end)
{
	long long v = 0;

	*end = s;
	if (*s < '0' || *s > '9')
		return -1;
	for (; *s >= '0' && *s <= '9'; s++)
		v = v >= DIGITS_MAX / 10 ? DIGITS_MAX : v * 10 + (*s - '0');
	*end = s;
	return v;
}

/* The digits at s saturated at INT_MAX, or dflt when s starts with none. */
static int int_at(const char *s, int dflt, const char **end)
{
	long long v = digits(s, end);

	return v < 0 ? dflt : v > INT_MAX ? INT_MAX : (int)v;
}

/* "IDX:0-1,3" after GRES= (or in TRES-less lines, GRES_IDX=gpu(IDX:0)).
 * An index past INT_MAX ends the list. */
static void parse_idx(const char *line, int *gpus, int *ngpus)
{
	const char *p = strstr(line, "(IDX:"), *end;
	long long a, b;

	*ngpus = 0;
	if (!p)
		return;
	p += 5;
	while (*ngpus < 16 && (a = digits(p, &end)) >= 0 && a <= INT_MAX) {
		b = a;
		if (*end == '-' && (b = digits(end + 1, &end)) < 0)
			break;
		for (; a <= b && a <= INT_MAX && *ngpus < 16; a++)
			gpus[(*ngpus)++] = (int)a;
		if (*end != ',')
			break;
		p = end + 1;
	}
}

/* "[D-]HH:MM:SS" or "MM:SS" into seconds saturated at SLURM_RUN_S_MAX, -1
 * when unknown (INVALID, UNLIMITED, a sign, a part without digits). */
static long parse_duration(const char *s)
{
	long long d = 0, part[3] = {0, 0, 0}, t;
	const char *end;
	int n = 0;

	if (strchr(s, '-')) {
		d = digits(s, &end);
		if (d < 0 || *end != '-')
			return -1;
		s = end + 1;
	}
	while (n < 3) {
		if ((part[n++] = digits(s, &end)) < 0)
			return -1;
		if (*end != ':')
			break;
		s = end + 1;
	}
	if (n == 3)
		t = d * 86400 + part[0] * 3600 + part[1] * 60 + part[2];
	else if (n == 2)
		t = d * 86400 + part[0] * 60 + part[1];
	else
		return -1;
	return t > SLURM_RUN_S_MAX ? SLURM_RUN_S_MAX : (long)t;
}

int slurm_parse_job(const char *line, struct slurm_info *info)
{
	const char *end;
	char v[64];

	memset(info, 0, sizeof(*info));
	if (field(line, "JobState", info->state, sizeof(info->state)))
		return -EINVAL;
	if (field(line, "Reason", info->reason, sizeof(info->reason)) ||
	    strcmp(info->reason, "None") == 0)
		info->reason[0] = '\0';
	if (field(line, "BatchHost", info->node, sizeof(info->node)))
		info->node[0] = '\0';
	if (field(line, "ExitCode", v, sizeof(v)) == 0) {
		info->exit_code = int_at(v, 0, &end);
		if (end > v && *end == ':')
			info->signal = int_at(end + 1, 0, &end);
	}
	info->run_s = field(line, "RunTime", v, sizeof(v)) == 0 ? parse_duration(v) : -1;
	info->restarts = field(line, "Restarts", v, sizeof(v)) == 0 ? int_at(v, 0, &end) : 0;
	parse_idx(line, info->gpus, &info->ngpus);
	return 0;
}

int slurm_parse_queue(const char *line, char id[32], struct slurm_info *info)
{
	const char *f[5], *p = line, *end, *e;
	size_t len[5];
	char v[32];
	int i;

	/* Five fields end in '|'; the reason is the rest of the line less its
	 * last '|'. */
	for (i = 0; i < 5; i++) {
		f[i] = p;
		len[i] = strcspn(p, "|\n");
		if (p[len[i]] != '|')
			return -EINVAL;
		p += len[i] + 1;
	}
	end = p + strcspn(p, "\n");
	if (end == p || end[-1] != '|' || len[0] == 0 || len[0] >= 32 || len[1] == 0 ||
	    len[1] >= sizeof(info->state) || strspn(f[0], "0123456789_") != len[0] ||
	    len[2] == 0 || strspn(f[2], "0123456789") != len[2] || len[3] >= sizeof(v))
		return -EINVAL;
	memset(info, 0, sizeof(*info));
	snprintf(id, 32, "%.*s", (int)len[0], f[0]);
	snprintf(info->state, sizeof(info->state), "%.*s", (int)len[1], f[1]);
	info->restarts = int_at(f[2], 0, &e);
	snprintf(v, sizeof(v), "%.*s", (int)len[3], f[3]);
	info->run_s = parse_duration(v);
	if (!(len[4] == 3 && strncmp(f[4], "n/a", 3) == 0))
		snprintf(info->node, sizeof(info->node), "%.*s", (int)len[4], f[4]);
	if (!(end - 1 - p == 4 && strncmp(p, "None", 4) == 0))
		snprintf(info->reason, sizeof(info->reason), "%.*s", (int)(end - 1 - p), p);
	return 0;
}

int slurm_state_final(const char *state)
{
	static const char *const final[] = {
		"COMPLETED", "FAILED", "TIMEOUT", "CANCELLED", "NODE_FAIL", "PREEMPTED",
		"OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE", NULL,
	};
	int i;

	for (i = 0; final[i]; i++)
		if (strcmp(state, final[i]) == 0)
			return 1;
	return 0;
}

int slurm_find_job_by_output(const char *output, int timeout_ms, char id[32])
{
	char *argv[] = { (char *)"scontrol", (char *)"-o", (char *)"show", (char *)"job", NULL };
	char *text = NULL, *line, *next, want[4200];
	size_t wl, len;
	int rc, ran;

	wl = (size_t)snprintf(want, sizeof(want), " StdOut=%s", output);
	if (wl >= sizeof(want))
		return -ENOENT;
	ran = capture_run(argv, timeout_ms, SCONTROL_OUTPUT_MAX, &text, &len);
	if (ran == -ETIMEDOUT)
		return -ETIMEDOUT;
	if (!text)
		return ran == -ENOMEM ? -ENOMEM : -EIO;
	rc = -ENOENT;
	for (line = text; rc != 0 && line && *line; line = next) {
		char *p;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		p = strstr(line, want);
		if (!p || (p[wl] != ' ' && p[wl] != '\0') || strncmp(line, "JobId=", 6) != 0)
			continue;
		snprintf(id, 32, "%.*s", (int)strspn(line + 6, "0123456789_"), line + 6);
		rc = id[0] ? 0 : -ENOENT;
	}
	free(text);
	/* A job found is found; otherwise a failed scontrol knows nothing. */
	return rc != 0 && ran != 0 ? -EIO : rc;
}

int slurm_cancel_job(const char *job_id, int timeout_ms)
{
	char *argv[] = { (char *)"scancel", (char *)job_id, NULL };
	char *text = NULL;
	size_t len;
	int rc;

	if (!job_id[0] || job_id[strspn(job_id, "0123456789_")])
		return -EINVAL;
	rc = capture_run(argv, timeout_ms, 4096, &text, &len);
	free(text);
	if (rc == 0 || rc == -ETIMEDOUT || rc == -ENOMEM)
		return rc;
	return -EIO;
}
