/*
 * runenv.c - the environment a recipe run ran in: the script that prints it
 * where the command runs, and the parser that reads it back from the log
 * (see runenv.h for the lines and the rules).
 *
 * Design. The script is fixed text (SCRIPT_FUNCS, SCRIPT_PROBES unless the
 * engine read the probes itself, SCRIPT_GPUS, SCRIPT_TAIL) with one
 * `pfs_version DISPLAY COMMAND` call per version command between them, both
 * words single-quoted (runenv_sh_quote), so a command is data to the script
 * and only the inner `sh -c` interprets it. The probes of the machine (os,
 * kernel, cpu, cpus, memory) are one awk program over os-release and
 * /proc (cpuinfo, meminfo, the kernel's names, its own affinity mask),
 * which runs uname, lscpu or nproc only where /proc lacks the answer: a run
 * costs two processes before its command (the subshell and awk), not the
 * thirty of a pipeline per value (W6 of tests/bench runs 1,000 recipes).
 * A file it cannot read is given to awk as /dev/null (awk stops at a file
 * it cannot open, and would print nothing).
 * Every value goes through one cleaning, awk's clean() or, for output of
 * programs that may print anything (version commands, nvidia-smi), the
 * shell pipeline pfs_clean: control characters become spaces (tr first in
 * the pipeline, so awk never sees a NUL), the first line that is not blank
 * is kept, trimmed and cut (input lines are cut to 1,024 bytes first), so
 * whatever a probe or a version command prints, the block gains at most one
 * line per value, and that line starts with "# env.". The probes run in a
 * subshell with stdin from /dev/null and stderr to /dev/null; the subshell
 * ends before `exec "$@"`, so the command inherits nothing from them. A
 * version command's exit status travels as the last line of the same pipe
 * (POSIX sh has no pipefail); awk keeps the first non-blank line before it.
 *
 * The parser walks the text a line at a time, noting where each value lies
 * (slices of the caller's text), and builds the JSON with cJSON only at the
 * end, in a fixed member order, so a restarted block costs nothing but
 * forgetting the slices. Values are cleaned again here (UTF-8 checked,
 * control characters as spaces, length capped): a log is not trusted to
 * come from the script.
 *
 * No shared state: thread-safe.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "runenv.h"

#define DISPLAY_MAX 200 /* bytes of a version command as printed */
#define VALUE_MAX 1024  /* bytes of a parsed value */

/* tr arguments that turn every control character but '\n' into a space
 * (32 characters: \000-\011, \013-\037, \177; 32 spaces). */
#define TR_CTRL "LC_ALL=C tr '\\000-\\011\\013-\\037\\177' '                                '"

static const char SCRIPT_FUNCS[] =
	"# packetfs: print the environment of this run, then run the command (engine/format/runenv.h).\n"
	"(\n"
	"pfs_clean() {\n"
	"\t" TR_CTRL " | LC_ALL=C cut -b 1-1024 |\n"
	"\tLC_ALL=C awk -v max=\"$1\" '/[^ ]/ { sub(/^ +/, \"\"); sub(/ +$/, \"\"); "
	"print substr($0, 1, max); exit }'\n"
	"}\n"
	"pfs_put() {\n"
	"\tpfs_v=$(printf '%s\\n' \"$2\" | pfs_clean \"${3:-300}\")\n"
	"\tif [ -n \"$pfs_v\" ]; then printf '# env.%s: %s\\n' \"$1\" \"$pfs_v\"; fi\n"
	"}\n"
	"if command -v timeout >/dev/null 2>&1; then\n"
	"\tpfs_to() { timeout \"$@\"; }\n"
	"else\n"
	"\tpfs_to() { shift; \"$@\"; }\n"
	"fi\n"
	"pfs_version() {\n"
	"\tpfs_o=$({ pfs_to 30 sh -c \"$2\" </dev/null 2>&1; printf '\\n%s\\n' \"$?\"; } |\n"
	"\t\t" TR_CTRL " | LC_ALL=C cut -b 1-1024 |\n"
	"\t\tLC_ALL=C awk 'NR > 1 && f == \"\" && l ~ /[^ ]/ { f = l }\n"
	"\t\t\t{ l = $0 }\n"
	"\t\t\tEND { if (f == \"\") printf \"(exit %s, no output)\\n\", l\n"
	"\t\t\t\telse { sub(/^ +/, \"\", f); sub(/ +$/, \"\", f); print substr(f, 1, 300) } }')\n"
	"\tprintf '# env.version: %s => %s\\n' \"$1\" \"$pfs_o\"\n"
	"}\n";

/* The probes of the machine (os, kernel, cpu, cpus, memory). */
static const char SCRIPT_PROBES[] =
	"pfs_f=/etc/os-release\n"
	"[ -r \"$pfs_f\" ] || pfs_f=/usr/lib/os-release\n"
	"[ -r \"$pfs_f\" ] || pfs_f=/dev/null\n"
	"pfs_c=/proc/cpuinfo pfs_m=/proc/meminfo\n"
	"[ -r \"$pfs_c\" ] || pfs_c=/dev/null\n"
	"[ -r \"$pfs_m\" ] || pfs_m=/dev/null\n"
	"LC_ALL=C awk '\n"
	"function clean(v, max,  n, i, a, c) {\n"
	"\tn = split(v, a, \"\\n\")\n"
	"\tfor (i = 1; i <= n; i++) {\n"
	"\t\tc = substr(a[i], 1, 1024); gsub(/[\\001-\\037\\177]/, \" \", c)\n"
	"\t\tif (c ~ /[^ ]/) { sub(/^ +/, \"\", c); sub(/ +$/, \"\", c); return substr(c, 1, max) }\n"
	"\t}\n"
	"\treturn \"\"\n"
	"}\n"
	"function put(k, v) { v = clean(v, 300); if (v != \"\") printf \"# env.%s: %s\\n\", k, v }\n"
	"function run(cmd, re,  l, v) {\n"
	"\twhile ((cmd | getline l) > 0)\n"
	"\t\tif (v == \"\" && (re == \"\" || sub(re, \"\", l))) v = clean(l, 300)\n"
	"\tclose(cmd); return v\n"
	"}\n"
	"function line(f,  l, ok) { ok = (getline l < f) > 0; close(f); return ok ? l : \"\" }\n"
	"function kernel(  s, r, m) {\n"
	"\ts = line(\"/proc/sys/kernel/ostype\"); r = line(\"/proc/sys/kernel/osrelease\")\n"
	"\tm = line(\"/proc/sys/kernel/arch\")\n"
	"\tif (s != \"\" && r != \"\" && m != \"\") return s \" \" r \" \" m\n"
	"\treturn run(\"uname -srm 2>/dev/null\", \"\")\n"
	"}\n"
	"function cpus(  f, l, n, i, a, b, c) {\n"
	"\tf = \"/proc/self/status\"\n"
	"\twhile ((getline l < f) > 0)\n"
	"\t\tif (sub(/^Cpus_allowed_list:[ \\t]*/, \"\", l) && l ~ /^[0-9][0-9,-]*$/) {\n"
	"\t\t\tn = split(l, a, \",\")\n"
	"\t\t\tfor (i = 1; i <= n; i++)\n"
	"\t\t\t\tc += split(a[i], b, \"-\") == 2 ? b[2] - b[1] + 1 : 1\n"
	"\t\t}\n"
	"\tclose(f)\n"
	"\tif (c > 0) return c\n"
	"\treturn run(\"unset OMP_NUM_THREADS OMP_THREAD_LIMIT; \" \\\n"
	"\t\t\"nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null\", \"\")\n"
	"}\n"
	"FILENAME == ARGV[1] && os == \"\" && sub(/^PRETTY_NAME=/, \"\") {\n"
	"\tos = clean($0, 1000)\n"
	"\tif (os ~ /^\".*\"$/ || os ~ /^\\047.*\\047$/) os = substr(os, 2, length(os) - 2)\n"
	"\tos = clean(os, 300)\n"
	"}\n"
	"FILENAME == ARGV[2] && cpu == \"\" && sub(/^model name[ \\t]*:[ \\t]*/, \"\") { cpu = clean($0, 300) }\n"
	"FILENAME == ARGV[3] && $1 == \"MemTotal:\" && mem == \"\" { mem = $2 }\n"
	"END {\n"
	"\tif (os == \"\") os = run(\"uname -s 2>/dev/null\", \"\")\n"
	"\tput(\"os\", os)\n"
	"\tput(\"kernel\", kernel())\n"
	"\tif (cpu == \"\") cpu = run(\"LC_ALL=C lscpu 2>/dev/null\", \"^Model name:[ \\t]*\")\n"
	"\tif (cpu == \"\") cpu = run(\"uname -p 2>/dev/null\", \"\")\n"
	"\tif (cpu != \"unknown\") put(\"cpu\", cpu)\n"
	"\tput(\"cpus\", cpus())\n"
	"\tif (mem ~ /^[0-9]+$/ && length(mem) < 16) printf \"# env.memory: %.0f\\n\", mem * 1024\n"
	"}' \"$pfs_f\" \"$pfs_c\" \"$pfs_m\"\n";

static const char SCRIPT_GPUS[] =
	"if command -v nvidia-smi >/dev/null 2>&1; then\n"
	"\tif [ -n \"${CUDA_VISIBLE_DEVICES:-}\" ]; then\n"
	"\t\tpfs_v=$(pfs_to 10 nvidia-smi -i \"$CUDA_VISIBLE_DEVICES\" "
	"--query-gpu=index,name,driver_version,memory.total --format=csv,noheader,nounits)\n"
	"\telse\n"
	"\t\tpfs_v=$(pfs_to 10 nvidia-smi "
	"--query-gpu=index,name,driver_version,memory.total --format=csv,noheader,nounits)\n"
	"\tfi && {\n"
	"\t\tprintf '%s\\n' \"$pfs_v\" | " TR_CTRL " | LC_ALL=C cut -b 1-1024 |\n"
	"\t\tLC_ALL=C awk '/^ *[0-9]/ && n < 64 { sub(/^ +/, \"\"); sub(/ +$/, \"\"); "
	"print \"# env.gpu: \" substr($0, 1, 300); n++ }'\n"
	"\t\tpfs_put cuda \"$(pfs_to 10 nvidia-smi | "
	"LC_ALL=C sed -n 's/.*CUDA Version: *\\([0-9][0-9.]*\\).*/\\1/p')\"\n"
	"\t}\n"
	"fi\n";

static const char SCRIPT_TAIL[] = "printf '# env.end\\n'\n"
				  ") </dev/null 2>/dev/null\n"
				  "exec \"$@\"\n";

int runenv_sh_quote(const char *s, struct buf *out)
{
	const char *q;
	int rc;

	rc = buf_puts(out, "'");
	while (rc == 0 && (q = strchr(s, '\'')) != NULL) {
		rc = buf_append(out, s, (size_t)(q - s));
		if (rc == 0)
			rc = buf_puts(out, "'\\''");
		s = q + 1;
	}
	if (rc == 0)
		rc = buf_puts(out, s);
	if (rc == 0)
		rc = buf_puts(out, "'");
	return rc;
}

/* Whether byte c is a UTF-8 continuation byte (10xxxxxx). */
static int utf8_cont(unsigned char c)
{
	return (c & 0xC0) == 0x80;
}

/*
 * A version command as the script prints it, into out (DISPLAY_MAX + 1
 * bytes): control characters as spaces, "=>" as "= >", blanks trimmed, cut
 * to DISPLAY_MAX bytes before a UTF-8 sequence, never inside one.
 */
static void display_command(const char *cmd, char *out)
{
	size_t n = 0;
	const char *p;

	for (p = cmd; *p && n < DISPLAY_MAX; p++) {
		unsigned char c = (unsigned char)*p;

		if (c < 0x20 || c == 0x7f)
			c = ' ';
		if (c == ' ' && n == 0)
			continue;
		out[n++] = (char)c;
		if (c == '=' && p[1] == '>' && n < DISPLAY_MAX)
			out[n++] = ' ';
	}
	/* Cut inside a sequence: drop its bytes (a lead byte and what follows). */
	if (*p && utf8_cont((unsigned char)*p)) {
		while (n > 0 && utf8_cont((unsigned char)out[n - 1]))
			n--;
		if (n > 0 && ((unsigned char)out[n - 1] & 0xC0) == 0xC0)
			n--;
	}
	while (n > 0 && out[n - 1] == ' ')
		n--;
	out[n] = '\0';
}

int runenv_script(char *const *versions, int probes, struct buf *out)
{
	char display[DISPLAY_MAX + 1];
	size_t i;
	int rc;

	rc = buf_puts(out, SCRIPT_FUNCS);
	if (rc == 0 && probes)
		rc = buf_puts(out, SCRIPT_PROBES);
	if (rc == 0)
		rc = buf_puts(out, SCRIPT_GPUS);
	for (i = 0; rc == 0 && versions && versions[i]; i++) {
		display_command(versions[i], display);
		if (!display[0])
			continue; /* blank */
		rc = buf_puts(out, "pfs_version ");
		if (rc == 0)
			rc = runenv_sh_quote(display, out);
		if (rc == 0)
			rc = buf_puts(out, " ");
		if (rc == 0)
			rc = runenv_sh_quote(versions[i], out);
		if (rc == 0)
			rc = buf_puts(out, "\n");
	}
	if (rc == 0)
		rc = buf_puts(out, SCRIPT_TAIL);
	return rc;
}

/* ---- the parser ---- */

/* A stretch of the caller's text. */
struct slice {
	const char *p;
	size_t n;
};

struct slices {
	struct slice *v;
	size_t n, cap;
};

/* The keys that come once, in the order of the JSON members. */
enum single { S_OS, S_KERNEL, S_CPU, S_CPUS, S_MEMORY, S_CUDA, S_COUNT };

static const char *const single_key[S_COUNT] = {
	"os", "kernel", "cpu", "cpus", "memory", "cuda",
};

struct block {
	struct slice single[S_COUNT]; /* p == NULL: absent */
	struct slices gpus;
	struct slices versions;
	int complete;
};

static int slices_push(struct slices *s, const char *p, size_t n)
{
	if (util_grow(&s->v, &s->cap, s->n, sizeof(*s->v), 8))
		return -ENOMEM;
	s->v[s->n].p = p;
	s->v[s->n].n = n;
	s->n++;
	return 0;
}

/* Forgets what the block held (the arrays' memory is kept). */
static void block_reset(struct block *b)
{
	memset(b->single, 0, sizeof(b->single));
	b->gpus.n = 0;
	b->versions.n = 0;
	b->complete = 0;
}

static int is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Trims blanks off both ends of [*p, *p + *n). */
static void trim(const char **p, size_t *n)
{
	while (*n && is_blank(**p)) {
		(*p)++;
		(*n)--;
	}
	while (*n && is_blank((*p)[*n - 1]))
		(*n)--;
}

static int has_prefix(const char *p, size_t n, const char *prefix)
{
	size_t k = strlen(prefix);

	return n >= k && memcmp(p, prefix, k) == 0;
}

/*
 * The length of the valid UTF-8 sequence at p (at most n bytes), 0 when
 * the bytes there are not one, -1 when they are the start of one that n
 * cuts short.
 */
static int utf8_seq(const unsigned char *p, size_t n)
{
	unsigned char c = p[0], lo = 0x80, hi = 0xBF;
	int need, i;

	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		need = 1;
	else if (c >= 0xE0 && c <= 0xEF)
		need = 2;
	else if (c >= 0xF0 && c <= 0xF4)
		need = 3;
	else
		return 0;
	if (c == 0xE0)
		lo = 0xA0; /* overlong */
	else if (c == 0xED)
		hi = 0x9F; /* surrogates */
	else if (c == 0xF0)
		lo = 0x90; /* overlong */
	else if (c == 0xF4)
		hi = 0x8F; /* past U+10FFFF */
	for (i = 1; i <= need; i++) {
		if ((size_t)i >= n)
			return -1;
		if (p[i] < (i == 1 ? lo : 0x80) || p[i] > (i == 1 ? hi : 0xBF))
			return 0;
	}
	return need + 1;
}

/*
 * A clean copy of [p, p + n) (NUL-terminated, caller frees; NULL on
 * ENOMEM): valid UTF-8 ('?' for a byte that is not, a sequence cut at the
 * end dropped), control characters (C0, DEL, C1) as spaces, blanks trimmed,
 * at most VALUE_MAX bytes, never ending inside a sequence.
 */
static char *clean(const char *p, size_t n)
{
	const unsigned char *s = (const unsigned char *)p;
	size_t i = 0, k = 0;
	char *out = malloc((n < VALUE_MAX ? n : VALUE_MAX) + 1);

	if (!out)
		return NULL;
	while (i < n) {
		int len = utf8_seq(s + i, n - i);

		if (len < 0)
			break; /* cut at the end */
		if (len == 0) {
			if (k + 1 > VALUE_MAX)
				break;
			out[k++] = '?';
			i++;
			continue;
		}
		if (k + (size_t)len > VALUE_MAX)
			break;
		if (len == 1 && (s[i] < 0x20 || s[i] == 0x7f)) {
			out[k++] = ' ';
		} else if (len == 2 && s[i] == 0xC2 && s[i + 1] < 0xA0) {
			out[k++] = ' '; /* C1 control, U+0080..U+009F */
		} else {
			memcpy(out + k, s + i, (size_t)len);
			k += (size_t)len;
		}
		i += (size_t)len;
	}
	while (k && out[k - 1] == ' ')
		k--;
	out[k] = '\0';
	for (i = 0; out[i] == ' '; i++)
		;
	if (i)
		memmove(out, out + i, k - i + 1);
	return out;
}

/* The decimal number of [p, p + n) (digits only, at most max), or -1. */
static long long decimal(const char *p, size_t n, long long max)
{
	long long v = 0;
	size_t i;

	trim(&p, &n);
	if (n == 0 || n > 18)
		return -1;
	for (i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -1;
		v = v * 10 + (p[i] - '0');
	}
	return v <= max ? v : -1;
}

/*
 * Reads one line of the block: "# env.KEY: VALUE" or "# env.end". Returns 1
 * when the line ends the block, 0 otherwise, -ENOMEM.
 */
static int block_line(struct block *b, const char *p, size_t n)
{
	const char *key = p + 6, *colon, *val; /* past "# env." */
	size_t klen, vn;
	int s;

	n -= 6;
	trim(&key, &n);
	if (n == 3 && memcmp(key, "end", 3) == 0) {
		b->complete = 1;
		return 1;
	}
	colon = memchr(key, ':', n);
	if (!colon)
		return 0;
	klen = (size_t)(colon - key);
	val = colon + 1;
	vn = n - klen - 1;
	trim(&val, &vn);
	if (vn == 0)
		return 0;
	if (klen == 3 && memcmp(key, "gpu", 3) == 0)
		return slices_push(&b->gpus, val, vn);
	if (klen == 7 && memcmp(key, "version", 7) == 0)
		return slices_push(&b->versions, val, vn);
	for (s = 0; s < S_COUNT; s++) {
		if (strlen(single_key[s]) != klen || memcmp(key, single_key[s], klen) != 0)
			continue;
		if (b->single[s].p)
			block_reset(b); /* printed again: the block starts again here */
		b->single[s].p = val;
		b->single[s].n = vn;
		break;
	}
	return 0;
}

/*
 * Finds the block in the text and notes its lines in b. Returns 0, -ENOENT
 * (no block), -ENOMEM.
 */
static int scan(const char *log, size_t len, struct block *b)
{
	const char *p = log, *end = log + len;
	int open = 0, rc;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *next = nl ? nl + 1 : end;
		size_t n = (size_t)((nl ? nl : end) - p);

		if (n && p[n - 1] == '\r')
			n--;
		if (has_prefix(p, n, "# env.")) {
			open = 1;
			rc = block_line(b, p, n);
			if (rc < 0)
				return rc;
			if (rc == 1)
				break;
		} else if (!open) {
			const char *q = p;
			size_t qn = n;

			trim(&q, &qn);
			if (qn && q[0] != '#')
				return -ENOENT; /* output before any block */
		}
		p = next;
	}
	return open ? 0 : -ENOENT;
}

/* Adds member name = the clean text of [p, p + n) to obj. 0 or -ENOMEM. */
static int add_text(cJSON *obj, const char *name, const char *p, size_t n)
{
	char *s = clean(p, n);
	cJSON *item;

	if (!s)
		return -ENOMEM;
	item = cJSON_AddStringToObject(obj, name, s);
	free(s);
	return item ? 0 : -ENOMEM;
}

static int add_number(cJSON *obj, const char *name, double v)
{
	return cJSON_AddNumberToObject(obj, name, v) ? 0 : -ENOMEM;
}

/* One GPU line, "INDEX, NAME, DRIVER, MEMORY_MIB", as an object in arr.
 * NAME may hold commas: the last two fields are driver and memory. */
static int add_gpu(cJSON *arr, const struct slice *sl)
{
	const char *f[64];
	size_t fn[64], nf = 0;
	const char *p = sl->p, *end = sl->p + sl->n;
	cJSON *g = cJSON_CreateObject();
	long long v;
	int rc = 0;

	if (!g || !cJSON_AddItemToArray(arr, g)) {
		cJSON_Delete(g);
		return -ENOMEM;
	}
	while (nf < 64) {
		const char *c = memchr(p, ',', (size_t)(end - p));

		f[nf] = p;
		fn[nf] = (size_t)((c ? c : end) - p);
		trim(&f[nf], &fn[nf]);
		nf++;
		if (!c)
			break;
		p = c + 1;
	}
	if (nf == 64) /* more commas than fields kept: the rest is the last */
		fn[63] = (size_t)(end - f[63]);
	if ((v = decimal(f[0], fn[0], INT32_MAX)) >= 0)
		rc = add_number(g, "index", (double)v);
	if (rc == 0 && nf >= 2) {
		size_t last = nf >= 4 ? nf - 3 : 1; /* the name's last field */
		size_t n = (size_t)(f[last] + fn[last] - f[1]);

		if (n)
			rc = add_text(g, "name", f[1], n);
	}
	if (rc == 0 && nf >= 3 && fn[nf >= 4 ? nf - 2 : 2])
		rc = add_text(g, "driver", f[nf >= 4 ? nf - 2 : 2], fn[nf >= 4 ? nf - 2 : 2]);
	if (rc == 0 && nf >= 4 && (v = decimal(f[nf - 1], fn[nf - 1], INT32_MAX)) >= 0)
		rc = add_number(g, "memory_mib", (double)v);
	return rc;
}

/* One version line, "COMMAND => OUTPUT", as an object in arr. */
static int add_version(cJSON *arr, const struct slice *sl)
{
	const char *sep = NULL, *p;
	cJSON *v = cJSON_CreateObject();
	int rc;

	if (!v || !cJSON_AddItemToArray(arr, v)) {
		cJSON_Delete(v);
		return -ENOMEM;
	}
	for (p = sl->p; p + 4 <= sl->p + sl->n; p++)
		if (memcmp(p, " => ", 4) == 0) {
			sep = p;
			break;
		}
	if (!sep && sl->n >= 3 && memcmp(sl->p + sl->n - 3, " =>", 3) == 0)
		sep = sl->p + sl->n - 3; /* an empty output, its blank trimmed */
	if (!sep) /* not the script's shape: all of it is the command */
		sep = sl->p + sl->n;
	rc = add_text(v, "command", sl->p, (size_t)(sep - sl->p));
	if (rc == 0)
		rc = sep + 4 <= sl->p + sl->n
			     ? add_text(v, "output", sep + 4, (size_t)(sl->p + sl->n - sep - 4))
			     : add_text(v, "output", "", 0);
	return rc;
}

/* The array key in obj, its elements made by add (add_gpu, add_version)
 * from the slices of list in their order; no key for an empty list.
 * 0 or -ENOMEM. */
static int add_list(cJSON *obj, const char *key, const struct slices *list,
		    int (*add)(cJSON *arr, const struct slice *sl))
{
	cJSON *arr;
	size_t i;
	int rc = 0;

	if (!list->n)
		return 0;
	arr = cJSON_AddArrayToObject(obj, key);
	if (!arr)
		return -ENOMEM;
	for (i = 0; rc == 0 && i < list->n; i++)
		rc = add(arr, &list->v[i]);
	return rc;
}

/* The JSON object of b into obj. 0 or -ENOMEM. */
static int build(const struct block *b, cJSON *obj)
{
	const struct slice *s = b->single;
	long long v;
	int rc = 0;

	if (s[S_OS].p)
		rc = add_text(obj, "os", s[S_OS].p, s[S_OS].n);
	if (rc == 0 && s[S_KERNEL].p)
		rc = add_text(obj, "kernel", s[S_KERNEL].p, s[S_KERNEL].n);
	if (rc == 0 && s[S_CPU].p)
		rc = add_text(obj, "cpu", s[S_CPU].p, s[S_CPU].n);
	if (rc == 0 && s[S_CPUS].p && (v = decimal(s[S_CPUS].p, s[S_CPUS].n, INT32_MAX)) >= 0)
		rc = add_number(obj, "cpus", (double)v);
	/* Bytes as a JSON number stay exact up to 2^53 (8 PiB). */
	if (rc == 0 && s[S_MEMORY].p &&
	    (v = decimal(s[S_MEMORY].p, s[S_MEMORY].n, 1LL << 53)) >= 0)
		rc = add_number(obj, "memory_bytes", (double)v);
	if (rc == 0)
		rc = add_list(obj, "gpus", &b->gpus, add_gpu);
	if (rc == 0 && s[S_CUDA].p)
		rc = add_text(obj, "cuda", s[S_CUDA].p, s[S_CUDA].n);
	if (rc == 0)
		rc = add_list(obj, "versions", &b->versions, add_version);
	if (rc == 0 && !cJSON_AddBoolToObject(obj, "complete", b->complete))
		rc = -ENOMEM;
	return rc;
}

int runenv_parse(const char *log, size_t len, char **json)
{
	struct block b;
	cJSON *obj = NULL;
	char *text;
	int rc;

	memset(&b, 0, sizeof(b));
	rc = scan(log, len, &b);
	if (rc)
		goto out;
	obj = cJSON_CreateObject();
	if (!obj) {
		rc = -ENOMEM;
		goto out;
	}
	rc = build(&b, obj);
	if (rc)
		goto out;
	text = cJSON_PrintUnformatted(obj);
	if (!text) {
		rc = -ENOMEM;
		goto out;
	}
	*json = text;
out:
	cJSON_Delete(obj);
	free(b.gpus.v);
	free(b.versions.v);
	return rc;
}
