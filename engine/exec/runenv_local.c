/*
 * runenv_local.c - the environment block of a run started on this machine:
 * the probes the script would run (runenv.c) read here instead, by the
 * thread that starts the run, and what is left for the script.
 *
 * Design. For a local run the engine is where the command runs: the
 * machine's files are the same, and a spawned child inherits the affinity
 * mask of the thread that spawns it. So the probes are read in C with the
 * script's rules (the same sources, the same cleaning, the same lines), and
 * the script keeps only what depends on the run itself: the version
 * commands (its cwd, environment and user) and nvidia-smi (its
 * CUDA_VISIBLE_DEVICES). A run that needs neither starts as its command
 * itself (the runner looks it up on the run's PATH as `exec` would). Where
 * this machine's answer would need a tool (no "model name" in
 * /proc/cpuinfo: the script asks lscpu), the script probes as before. A run of 1,000 recipes spent most of its CPU time starting
 * the probes' processes (W6 of tests/bench).
 *
 * The machine's facts are read once per daemon and kept (facts, below):
 * /proc/cpuinfo alone cost more than the rest of a run's start. What can
 * change while the daemon runs is looked at for each run, cheaply: the
 * kernel's names (uname), os-release (its stat: an upgrade replaces it) and
 * the memory (sysinfo's total, which is the kernel's MemTotal: memory
 * hotplug, a balloon); a change reads that fact again. The CPU model is the
 * boot's. The affinity mask is the calling thread's, read for each run.
 *
 * Any thread: the kept facts are behind a mutex.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "format.h"

#define VALUE_CUT 300	/* bytes of a value in the block */
#define LINE_CUT 1024	/* bytes of an input line looked at */
#define SH_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* A byte the script turns into a space (tr), so that trimming drops it. */
static int blank(unsigned char c)
{
	return c <= 0x20 || c == 0x7f;
}

/*
 * The script's cleaning of one value, into out (max + 1 bytes): of the
 * first LINE_CUT bytes of each line of v (len bytes), the first line that
 * is not blank, control characters as spaces, trimmed of spaces, then cut
 * to max bytes (as awk's substr in the C locale). "" when all are blank.
 */
static void clean(const char *v, size_t len, char *out, size_t max)
{
	const char *end = v + len;

	while (v < end) {
		const char *nl = memchr(v, '\n', (size_t)(end - v));
		size_t n = (size_t)((nl ? nl : end) - v), a = 0, b, k;

		if (n > LINE_CUT)
			n = LINE_CUT;
		while (a < n && blank((unsigned char)v[a]))
			a++;
		b = n;
		while (b > a && blank((unsigned char)v[b - 1]))
			b--;
		if (b > a) {
			if (b - a > max)
				b = a + max;
			for (k = 0; a + k < b; k++)
				out[k] = blank((unsigned char)v[a + k]) ? ' ' : v[a + k];
			out[k] = '\0';
			return;
		}
		v = nl ? nl + 1 : end;
	}
	out[0] = '\0';
}

/* Whether any of versions prints a line (the script skips blank ones). */
static int has_version(char *const *versions)
{
	const char *p;
	size_t i;

	for (i = 0; versions && versions[i]; i++)
		for (p = versions[i]; *p; p++)
			if (!blank((unsigned char)*p))
				return 1;
	return 0;
}

/* Appends "# env.KEY: VALUE\n" when value is not empty. */
static int put(struct buf *out, const char *key, const char *value)
{
	return value[0] ? buf_printf(out, "# env.%s: %s\n", key, value) : 0;
}

/*
 * The value after prefix of the first line of file that starts with it and
 * whose value is not blank once cleaned, into out (max + 1 bytes). With a
 * colon wanted, the prefix may be followed by blanks, ':' and blanks (as
 * the script's `model name[ \t]*:[ \t]*`). "" when none.
 */
static void file_value(const char *file, const char *prefix, int colon, char *out, size_t max)
{
	size_t plen = strlen(prefix);
	char line[LINE_CUT + 2];
	FILE *f = fopen(file, "re");

	out[0] = '\0';
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		size_t n = strlen(line);
		char *v = line + plen;

		if (n == sizeof(line) - 1 && line[n - 1] != '\n') {
			int c; /* a long line: the rest is not looked at */

			while ((c = fgetc(f)) != EOF && c != '\n')
				;
		}
		if (strncmp(line, prefix, plen) != 0)
			continue;
		if (colon) {
			v += strspn(v, " \t");
			if (*v != ':')
				continue;
			v++;
			v += strspn(v, " \t");
		}
		clean(v, strcspn(v, "\n"), out, max);
		if (out[0])
			break;
	}
	fclose(f);
}

/* os: PRETTY_NAME of os-release unquoted, else the kernel's sysname. */
static void probe_os(const struct utsname *u, char *out)
{
	char v[1001];
	size_t n;

	if (access("/etc/os-release", R_OK) == 0)
		file_value("/etc/os-release", "PRETTY_NAME=", 0, v, 1000);
	else
		file_value("/usr/lib/os-release", "PRETTY_NAME=", 0, v, 1000);
	n = strlen(v);
	if (n >= 2 && (v[0] == '"' || v[0] == '\'') && v[n - 1] == v[0]) {
		v[n - 1] = '\0';
		clean(v + 1, n - 2, out, VALUE_CUT);
	} else {
		clean(v, n, out, VALUE_CUT);
	}
	if (!out[0])
		clean(u->sysname, strlen(u->sysname), out, VALUE_CUT);
}

/* kernel: as the script, the kernel's names from /proc/sys/kernel where
 * all three are (arch is the kernel's machine, whatever the personality),
 * else uname(2)'s, which `uname -srm` prints. */
static void probe_kernel(const struct utsname *u, char *out)
{
	char s[VALUE_CUT + 1], r[VALUE_CUT + 1], m[VALUE_CUT + 1], text[3 * (VALUE_CUT + 1)];

	file_value("/proc/sys/kernel/ostype", "", 0, s, VALUE_CUT);
	file_value("/proc/sys/kernel/osrelease", "", 0, r, VALUE_CUT);
	file_value("/proc/sys/kernel/arch", "", 0, m, VALUE_CUT);
	if (s[0] && r[0] && m[0])
		snprintf(text, sizeof(text), "%s %s %s", s, r, m);
	else
		snprintf(text, sizeof(text), "%s %s %s", u->sysname, u->release, u->machine);
	clean(text, strlen(text), out, VALUE_CUT);
}

/* cpus: the CPUs of the calling thread's affinity mask, else online. */
static long probe_cpus(void)
{
	size_t ncpu;

	for (ncpu = 1024; ncpu <= 1u << 20; ncpu *= 2) {
		cpu_set_t *set = CPU_ALLOC(ncpu);
		size_t size = CPU_ALLOC_SIZE(ncpu);
		long n;

		if (!set)
			break;
		if (sched_getaffinity(0, size, set) == 0) {
			n = CPU_COUNT_S(size, set);
			CPU_FREE(set);
			return n;
		}
		CPU_FREE(set);
		if (errno != EINVAL)
			break;
	}
	return sysconf(_SC_NPROCESSORS_ONLN);
}

/* memory: MemTotal of /proc/meminfo in bytes, or -1. */
static long long probe_memory(void)
{
	char v[VALUE_CUT + 1];
	size_t n;

	file_value("/proc/meminfo", "MemTotal:", 0, v, VALUE_CUT);
	n = strcspn(v, " ");
	if (n == 0 || n >= 16 || strspn(v, "0123456789") != n)
		return -1;
	v[n] = '\0';
	return strtoll(v, NULL, 10) * 1024;
}

/* What identifies one version of a file: -errno when stat fails. */
struct file_id {
	int err;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime;
	mode_t mode;
	uid_t uid;
	gid_t gid;
};

static void file_id(const char *path, struct file_id *id)
{
	struct stat st;

	memset(id, 0, sizeof(*id));
	if (stat(path, &st)) {
		id->err = -errno;
		return;
	}
	id->dev = st.st_dev;
	id->ino = st.st_ino;
	id->size = st.st_size;
	id->mtime = st.st_mtim;
	id->ctime = st.st_ctim;
	id->mode = st.st_mode;
	id->uid = st.st_uid;
	id->gid = st.st_gid;
}

static int file_id_same(const struct file_id *a, const struct file_id *b)
{
	return a->err == b->err && a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec &&
	       a->ctime.tv_sec == b->ctime.tv_sec && a->ctime.tv_nsec == b->ctime.tv_nsec &&
	       a->mode == b->mode && a->uid == b->uid && a->gid == b->gid;
}

static int utsname_same(const struct utsname *a, const struct utsname *b)
{
	return strcmp(a->sysname, b->sysname) == 0 && strcmp(a->release, b->release) == 0 &&
	       strcmp(a->machine, b->machine) == 0;
}

/* The machine's facts as last read, and what tells that they changed. */
static struct {
	pthread_mutex_t lock;
	int have;			/* read at least once */
	char cpu[VALUE_CUT + 1];	/* "" when /proc/cpuinfo names no model */
	struct utsname u;		/* the names kernel and os were read with */
	char kernel[VALUE_CUT + 1];
	struct file_id etc_os, lib_os;	/* /etc/os-release, /usr/lib/os-release */
	char os[VALUE_CUT + 1];
	unsigned long long ram;		/* sysinfo's total when memory was read */
	long long mem;
} facts = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* The kept facts brought up to date (see the top); facts.lock held. */
static void facts_refresh(const struct utsname *u)
{
	struct file_id etc_os, lib_os;
	unsigned long long ram = 0;
	struct sysinfo si;
	int first = !facts.have;

	if (first)
		file_value("/proc/cpuinfo", "model name", 1, facts.cpu, VALUE_CUT);
	file_id("/etc/os-release", &etc_os);
	file_id("/usr/lib/os-release", &lib_os);
	if (first || !utsname_same(u, &facts.u) || !file_id_same(&etc_os, &facts.etc_os) ||
	    !file_id_same(&lib_os, &facts.lib_os)) {
		probe_kernel(u, facts.kernel);
		probe_os(u, facts.os);
		facts.u = *u;
		facts.etc_os = etc_os;
		facts.lib_os = lib_os;
	}
	if (sysinfo(&si) == 0)
		ram = (unsigned long long)si.totalram * (si.mem_unit ? si.mem_unit : 1);
	if (first || ram == 0 || ram != facts.ram) {
		facts.mem = probe_memory();
		facts.ram = ram;
	}
	facts.have = 1;
}

/* The probes' lines into out; -ENOENT when the script must probe. */
static int probe(struct buf *out)
{
	char os[VALUE_CUT + 1], cpu[VALUE_CUT + 1], kernel[VALUE_CUT + 1];
	struct utsname u;
	long long mem;
	long cpus;
	int rc;

	if (uname(&u))
		return -ENOENT;
	pthread_mutex_lock(&facts.lock);
	facts_refresh(&u);
	memcpy(cpu, facts.cpu, sizeof(cpu));
	memcpy(os, facts.os, sizeof(os));
	memcpy(kernel, facts.kernel, sizeof(kernel));
	mem = facts.mem;
	pthread_mutex_unlock(&facts.lock);
	if (!cpu[0])
		return -ENOENT; /* lscpu's answer, in the script */
	cpus = probe_cpus();
	rc = put(out, "os", os);
	if (rc == 0)
		rc = put(out, "kernel", kernel);
	if (rc == 0 && strcmp(cpu, "unknown") != 0)
		rc = put(out, "cpu", cpu);
	if (rc == 0 && cpus > 0)
		rc = buf_printf(out, "# env.cpus: %ld\n", cpus);
	if (rc == 0 && mem >= 0)
		rc = buf_printf(out, "# env.memory: %lld\n", mem);
	return rc;
}

int runenv_path_finds(const char *path, const char *name)
{
	char file[4096];
	const char *p = path ? path : SH_PATH;

	for (;;) {
		size_t n = strcspn(p, ":");
		struct stat st;

		/* An empty entry is the current directory, as in sh. */
		if ((size_t)snprintf(file, sizeof(file), "%.*s/%s", n ? (int)n : 1, n ? p : ".",
				     name) < sizeof(file) &&
		    stat(file, &st) == 0 && S_ISREG(st.st_mode) && access(file, X_OK) == 0)
			return 1;
		if (!p[n])
			return 0;
		p += n + 1;
	}
}

int runenv_local(char *const *versions, const char *path, struct buf *block, struct buf *script)
{
	size_t mark = block->len;
	int rc;

	rc = probe(block);
	if (rc == -ENOENT) {
		block->len = mark;
		if (block->data)
			block->data[mark] = '\0';
		return runenv_script(versions, 1, script);
	}
	if (rc)
		return rc;
	if (!runenv_path_finds(path, "nvidia-smi") && !has_version(versions)) {
		rc = buf_puts(block, "# env.end\n");
		return rc ? rc : 1;
	}
	return runenv_script(versions, 0, script);
}
