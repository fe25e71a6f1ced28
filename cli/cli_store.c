/*
 * cli_store.c - the commands that work on a store through the engine, with
 * no mount: `packetfs init` (creates one), `log` and `check` (read one,
 * opening it read-only, so they also work while it is mounted), `gc`
 * (reclaims space; opens it read-write, which the engine refuses, EBUSY,
 * while it is mounted: VACUUM rewrites the whole database). export and
 * import: cli_carry.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cli_int.h"
#include "engine.h"

/* path made absolute against the current directory (it need not exist).
 * Caller frees; NULL on ENOMEM. */
static char *absolute(const char *path)
{
	char cwd[PATH_MAX];
	char *out;

	if (path[0] == '/')
		return strdup(path);
	if (getcwd(cwd, sizeof(cwd)) == NULL)
		return NULL;
	if (asprintf(&out, "%s/%s", cwd, path) < 0)
		return NULL;
	return out;
}

/* --- init ------------------------------------------------------------ */

int cli_init(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "repo", required_argument, NULL, 'r' },
		{ "pipeline", required_argument, NULL, 'p' },
		CLI_OPTIONS_END,
	};
	const char *repo = NULL, *pipeline = NULL;
	char *store = NULL, *repo_abs = NULL, *json = NULL;
	char err[1024] = "", tmp[PATH_MAX + 64];
	struct buf pub = { NULL, 0, 0 };
	size_t len;
	int c, r, rc = 1;

	cli_opts_reset();
	while ((c = cli_next_option("init", argc, argv, ":h", longopts, &r)) > 0) {
		if (c == 'r')
			repo = optarg;
		else if (c == 'p')
			pipeline = optarg;
	}
	if (c == CLI_OPT_EXIT || (r = cli_operands("init", argc, 1, 1, "missing STORE")))
		return r;
	if (repo == NULL)
		return cli_usage_error("init", "missing --repo REPO");
	repo_abs = realpath(repo, NULL);
	if (repo_abs == NULL)
		return cli_fail("init", "%s: %s", repo, strerror(errno));
	if (pipeline) {
		r = util_read_file(pipeline, MAX_READ, &json, &len);
		if (r < 0) {
			cli_fail("init", "%s: %s", pipeline, strerror(-r));
			goto out;
		}
	}
	store = absolute(argv[optind]);
	if (store == NULL) {
		cli_fail("init", "%s: %s", argv[optind], strerror(errno ? errno : ENOMEM));
		goto out;
	}
	r = engine_init_store(store, repo_abs, json, err, sizeof(err));
	if (r < 0) {
		cli_fail("init", "%s", cli_why(err, r, store, tmp, sizeof(tmp)));
		goto out;
	}
	/* The public key of the store's signing key pair, for `verify --key`. */
	snprintf(tmp, sizeof(tmp), "%s/%s", store, ENGINE_SIGNING_PUB);
	r = util_read_path(tmp, MAX_READ, &pub);
	if (r < 0) {
		cli_fail("init", "%s: %s", tmp, strerror(-r));
		goto out;
	}
	fwrite(pub.data ? pub.data : "", 1, pub.len, stdout);
	rc = 0;
out:
	buf_free(&pub);
	free(store);
	free(json);
	free(repo_abs);
	return rc;
}

/* --- log, check ----------------------------------------------------------- */

int cli_log(int argc, char **argv)
{
	struct buf out = { NULL, 0, 0 };
	struct engine *e;
	const char *item, *path;
	int r;

	if ((r = cli_no_options("log", argc, argv)) >= 0 ||
	    (r = cli_operands("log", argc, 2, 3, "missing STORE|MOUNTPOINT or ITEM")))
		return r;
	item = argv[optind + 1];
	path = argc - optind == 3 ? argv[optind + 2] : NULL;
	if (cli_open_readonly("log", argv[optind], &e) != 0)
		return 1;
	r = engine_log(e, item, path, &out);
	engine_close(e);
	if (r == -ENOENT && path)
		r = cli_fail("log", "%s: no such item or document %s", item, path);
	else if (r == -ENOENT)
		r = cli_fail("log", "%s: no such item", item);
	else if (r < 0)
		r = cli_fail("log", "%s: %s", item, strerror(-r));
	else
		fwrite(out.data ? out.data : "", 1, out.len, stdout);
	buf_free(&out);
	return r;
}

int cli_check(int argc, char **argv)
{
	struct buf out = { NULL, 0, 0 };
	struct engine *e;
	int r;

	if ((r = cli_no_options("check", argc, argv)) >= 0 ||
	    (r = cli_operands("check", argc, 1, 1, "missing STORE or MOUNTPOINT")))
		return r;
	if (cli_open_readonly("check", argv[optind], &e) != 0)
		return 1;
	r = engine_check(e, &out);
	engine_close(e);
	if (r < 0) {
		buf_free(&out);
		return cli_fail("check", "%s: %s", argv[optind], strerror(-r));
	}
	fwrite(out.data ? out.data : "", 1, out.len, stdout);
	buf_free(&out);
	return r == 0 ? 0 : 1;
}

/* --- gc ------------------------------------------------------------------- */

/* Days a deleted document's history is kept by default (--older-than). */
#define GC_DAYS_DEFAULT 30

/* The bytes of the store's database files as du counts them: the
 * database, its WAL and its shared-memory index (missing ones count 0). */
static unsigned long long store_bytes(const char *store)
{
	static const char *const suffix[] = { "", "-wal", "-shm", NULL };
	unsigned long long total = 0;
	char path[PATH_MAX];
	struct stat st;
	size_t i;

	for (i = 0; suffix[i]; i++) {
		snprintf(path, sizeof(path), "%s/%s%s", store, ENGINE_DB_NAME, suffix[i]);
		if (stat(path, &st) == 0)
			total += (unsigned long long)st.st_size;
	}
	return total;
}

int cli_gc(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "older-than", required_argument, NULL, 'o' },
		CLI_OPTIONS_END,
	};
	struct engine_options eo = { NULL, NULL, 0 };
	unsigned long long before, after;
	struct engine_gc g;
	struct engine *e;
	char err[1024] = "", tmp[PATH_MAX + 64], why[256], *end;
	char path[PATH_MAX], store[PATH_MAX];
	long days = GC_DAYS_DEFAULT;
	int c, r;

	cli_opts_reset();
	while ((c = cli_next_option("gc", argc, argv, ":h", longopts, &r)) > 0) {
		if (c != 'o')
			continue;
		errno = 0;
		days = strtol(optarg, &end, 10);
		if (errno || end == optarg || *end || days < 0 || days > 36500) {
			snprintf(why, sizeof(why), "--older-than: not a whole number of days from 0 "
				 "to 36500: '%s'", optarg);
			return cli_usage_error("gc", why);
		}
	}
	if (c == CLI_OPT_EXIT || (r = cli_operands("gc", argc, 1, 1, "missing STORE")))
		return r;
	eo.store = argv[optind];
	/* A packetfs mount point names the store it shows (which a live
	 * daemon holds: refused below). */
	if (cli_mtab_path(eo.store, path) == 0 && cli_mtab_find(path, store, sizeof(store)) == 0 &&
	    store[0] == '/')
		eo.store = store;
	before = store_bytes(eo.store);
	r = engine_open(&eo, &e, err, sizeof(err));
	if (r == -EBUSY)
		return cli_fail("gc", "%s (the store is mounted: gc rewrites the database, so "
			       "unmount it first)", cli_why(err, r, eo.store, tmp, sizeof(tmp)));
	if (r < 0)
		return cli_fail("gc", "%s", cli_why(err, r, eo.store, tmp, sizeof(tmp)));
	r = engine_gc(e, (int)days, &g);
	engine_close(e);
	if (r < 0)
		return cli_fail("gc", "%s: %s", eo.store, strerror(-r));
	after = store_bytes(eo.store);
	printf("reclaimed %lld revisions of %lld paths, %lld bytes as stored (documents deleted "
	       "more than %ld days ago, temporary files)\n", (long long)g.revisions,
	       (long long)g.paths, (long long)g.stored_bytes, days);
	printf("store files: %llu bytes before, %llu bytes after\n", before, after);
	return 0;
}
