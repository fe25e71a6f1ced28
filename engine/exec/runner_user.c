/*
 * runner_user.c - runs as another user (runner.h, struct runner_user;
 * SPEC §5 "run_as"): the user's identity read from the user and group
 * databases. The group list is read here (getgrouplist reads NSS, which
 * must not run in a vfork child); the start of a process that drops to it
 * before exec is proc_start's (proc.c, struct proc_cred).
 */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runner_int.h"

#define MAX_GROUPS 65536

int runner_user_lookup(const char *name, struct runner_user **out)
{
	struct passwd pw, *res = NULL;
	struct runner_user *u;
	long size = sysconf(_SC_GETPW_R_SIZE_MAX);
	char *buf;
	int r, n = 32;

	if (size < 16384)
		size = 16384;
	buf = malloc((size_t)size);
	if (!buf)
		return -ENOMEM;
	r = getpwnam_r(name, &pw, buf, (size_t)size, &res);
	if (r || !res) {
		free(buf);
		return r == ENOMEM ? -ENOMEM : r && r != ENOENT && r != ESRCH ? -r : -ENOENT;
	}
	u = calloc(1, sizeof(*u));
	if (!u) {
		free(buf);
		return -ENOMEM;
	}
	u->uid = pw.pw_uid;
	u->gid = pw.pw_gid;
	if (asprintf(&u->env_home, "HOME=%s", pw.pw_dir && pw.pw_dir[0] ? pw.pw_dir : "/") < 0)
		u->env_home = NULL;
	if (asprintf(&u->env_user, "USER=%s", pw.pw_name) < 0)
		u->env_user = NULL;
	if (asprintf(&u->env_logname, "LOGNAME=%s", pw.pw_name) < 0)
		u->env_logname = NULL;
	u->name = strdup(pw.pw_name);
	r = u->env_home && u->env_user && u->env_logname && u->name ? 0 : -ENOMEM;
	/* getgrouplist says how many there are when the array is short. */
	while (r == 0) {
		gid_t *g = realloc(u->groups, (size_t)n * sizeof(gid_t));
		int want = n;

		if (!g) {
			r = -ENOMEM;
			break;
		}
		u->groups = g;
		if (getgrouplist(pw.pw_name, pw.pw_gid, g, &want) >= 0) {
			u->ngroups = want;
			break;
		}
		if (want <= n)
			want = n * 2;
		if (want > MAX_GROUPS)
			r = -E2BIG;
		n = want;
	}
	free(buf);
	if (r) {
		runner_user_free(u);
		return r;
	}
	*out = u;
	return 0;
}

void runner_user_free(struct runner_user *u)
{
	if (!u)
		return;
	free(u->groups);
	free(u->name);
	free(u->env_home);
	free(u->env_user);
	free(u->env_logname);
	free(u);
}
