/*
 * test-runenv.c - the environment block of a run (engine/format/runenv.c). The
 * script runs for real under /bin/sh with PATH set to a directory of the
 * tools it may use (links to the real ones), so that a real nvidia-smi on
 * the machine never answers; what it prints is checked line by line and
 * then parsed, and the values are compared with /etc/os-release, uname(2),
 * /proc/cpuinfo, the CPU affinity mask and /proc/meminfo. A stand-in
 * nvidia-smi (two GPUs, a banner with "CUDA Version: 12.4", honouring -i)
 * gives the GPU lines; a stand-in timeout of 1 s shows a hanging version
 * command. Version commands carry quotes, $, backticks, newlines, escape
 * sequences and forged block lines. sh quoting is checked against sh
 * itself. test-runenv-parse.c has the parser on hand-written logs.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "runenv-json.h"
#include "runenv.h"
#include "test.h"
#include "tool-links.h"
#include "util.h"

static char tmpdir[PATH_MAX];
static char bindir[PATH_MAX + 16];  /* links to the real tools */
static char fastdir[PATH_MAX + 16]; /* a stand-in timeout of 1 s */
static char errpath[PATH_MAX + 16]; /* the script's stderr */

/* The tools the script and the version commands of these tests use. */
static const char *const tools[] = {
	"sh", "tr", "cut", "awk", "sed", "uname", "nproc", "getconf", "lscpu", "timeout",
	"cat", "head", "sleep", "true", NULL,
};

static void write_exec(const char *path, const char *body)
{
	ASSERT_EQ(util_write_file(path, body, strlen(body)), 0);
	ASSERT_EQ(chmod(path, 0755), 0);
}

static char *read_all(int fd, size_t *len)
{
	char *out = NULL;
	size_t n = 0, cap = 0;
	ssize_t r;

	for (;;) {
		if (cap - n < 4096) {
			cap = cap ? cap * 2 : 65536;
			out = realloc(out, cap + 1);
			ASSERT(out != NULL);
		}
		r = read(fd, out + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		ASSERT(r >= 0);
		if (r == 0)
			break;
		n += (size_t)r;
	}
	out[n] = '\0';
	if (len)
		*len = n;
	return out;
}

/* The whole file at path, which must exist (caller frees). */
static char *read_path(const char *path)
{
	int fd = open(path, O_RDONLY);
	char *s;

	ASSERT(fd >= 0);
	s = read_all(fd, NULL);
	close(fd);
	return s;
}

/* The output of the child pid, which writes to the pipe fds: closes its
 * write end, reads the read end to its end (then closes it) and reaps pid
 * (its wait status into *st). Returns the output (caller frees). */
static char *output_of(pid_t pid, int fds[2], int *st)
{
	char *out;

	close(fds[1]);
	out = read_all(fds[0], NULL);
	close(fds[0]);
	ASSERT_EQ(waitpid(pid, st, 0), pid);
	return out;
}

/*
 * Runs `/bin/sh -c SCRIPT packetfs-run CMD...` (cmd NULL-terminated, may be
 * empty) with stdin from the text in (NULL: /dev/null) and stderr into
 * errpath. Returns its stdout (caller frees); *status its exit code; *pid
 * (if not NULL) the pid it ran as.
 */
static char *run_script(char *const *versions, const char *const *cmd, const char *in,
			int *status, pid_t *pidp)
{
	struct buf script;
	const char *argv[32];
	size_t n = 0, i;
	int fds[2], st;
	pid_t pid;
	char *out;

	buf_init(&script);
	ASSERT_EQ(runenv_script(versions, 1, &script), 0);
	argv[n++] = "/bin/sh";
	argv[n++] = "-c";
	argv[n++] = script.data;
	argv[n++] = RUNENV_ARG0;
	for (i = 0; cmd && cmd[i]; i++)
		argv[n++] = cmd[i];
	argv[n] = NULL;
	if (in) {
		char inpath[PATH_MAX + 16];

		snprintf(inpath, sizeof(inpath), "%s/stdin", tmpdir);
		ASSERT_EQ(util_write_file(inpath, in, strlen(in)), 0);
	}
	ASSERT_EQ(pipe(fds), 0);
	pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0) {
		char inpath[PATH_MAX + 16];
		int fd;

		snprintf(inpath, sizeof(inpath), "%s/stdin", tmpdir);
		fd = open(in ? inpath : "/dev/null", O_RDONLY);
		dup2(fd, 0);
		dup2(fds[1], 1);
		fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, 2);
		close(fds[0]);
		execv("/bin/sh", (char *const *)argv);
		_exit(127);
	}
	out = output_of(pid, fds, &st);
	ASSERT(WIFEXITED(st));
	*status = WEXITSTATUS(st);
	if (pidp)
		*pidp = pid;
	buf_free(&script);
	return out;
}


/* The lines of the block in out: every line from the first to "# env.end"
 * starts with "# env."; returns the block's length, "# env.end\n" included. */
static size_t check_block(const char *out)
{
	const char *end = strstr(out, "# env.end\n"), *p;

	if (!end)
		FAIL_AT("no # env.end in <<%s>>", out);
	for (p = out; p < end; p = strchr(p, '\n') + 1)
		if (strncmp(p, "# env.", 6) != 0)
			FAIL_AT("line outside the shape in <<%s>>", out);
	return (size_t)(end - out) + strlen("# env.end\n");
}

static size_t count_lines(const char *text, const char *prefix)
{
	size_t n = 0;
	const char *p;

	for (p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, prefix, strlen(prefix)) == 0)
			n++;
	return n;
}

/* ---- sh quoting ---- */

TEST(sh_quote)
{
	static const char *const words[] = {
		"", "plain", "it's", "'", "''", "a\"b", "$HOME", "${HOME}x", "`id`", "$(id)",
		"a\nb\n", "back\\slash\\", "\\'", "tab\there", "*", "~", "-n", "a b  c", "!x",
		"\xc3\xa9t\xc3\xa9", "#comment", ";exit 3;", "'\\''", NULL,
	};
	size_t i;

	for (i = 0; words[i]; i++) {
		struct buf script;
		const char *argv[] = {"/bin/sh", "-c", NULL, NULL};
		int fds[2], st;
		pid_t pid;
		char *out;

		buf_init(&script);
		ASSERT_EQ(buf_puts(&script, "printf '%s' "), 0);
		ASSERT_EQ(runenv_sh_quote(words[i], &script), 0);
		ASSERT_EQ(buf_puts(&script, "; printf '|%s' "), 0);
		ASSERT_EQ(runenv_sh_quote(words[i], &script), 0); /* a word, not split */
		argv[2] = script.data;
		ASSERT_EQ(pipe(fds), 0);
		pid = fork();
		ASSERT(pid >= 0);
		if (pid == 0) {
			dup2(fds[1], 1);
			close(fds[0]);
			execv("/bin/sh", (char *const *)argv);
			_exit(127);
		}
		out = output_of(pid, fds, &st);
		ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		{
			struct buf want;

			buf_init(&want);
			buf_printf(&want, "%s|%s", words[i], words[i]);
			ASSERT_STREQ(out, want.data);
			buf_free(&want);
		}
		free(out);
		buf_free(&script);
	}
}

/* ---- the script, run ---- */

/* PRETTY_NAME of os-release, unquoted, else uname's sysname, into out. */
static void want_os(char *out, size_t size)
{
	const char *files[] = {"/etc/os-release", "/usr/lib/os-release", NULL};
	char line[512];
	size_t i;

	out[0] = '\0';
	for (i = 0; files[i]; i++) {
		FILE *f = fopen(files[i], "r");

		if (!f)
			continue;
		while (fgets(line, sizeof(line), f))
			if (strncmp(line, "PRETTY_NAME=", 12) == 0) {
				char *v = line + 12;
				size_t n = strcspn(v, "\n");

				v[n] = '\0';
				if (n >= 2 && (v[0] == '"' || v[0] == '\'') && v[n - 1] == v[0]) {
					v[n - 1] = '\0';
					v++;
				}
				snprintf(out, size, "%s", v);
				break;
			}
		fclose(f);
		break;
	}
	if (!out[0]) {
		struct utsname u;

		ASSERT_EQ(uname(&u), 0);
		snprintf(out, size, "%s", u.sysname);
	}
}

/* The first "model name" of /proc/cpuinfo into out ("" when none). */
static void want_cpu(char *out, size_t size)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[1024];

	out[0] = '\0';
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "model name", 10) == 0 && strchr(line, ':')) {
			char *v = strchr(line, ':') + 1;
			size_t n;

			v += strspn(v, " \t");
			n = strcspn(v, "\n");
			while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
				n--;
			v[n] = '\0';
			snprintf(out, size, "%s", v);
			break;
		}
	fclose(f);
}

static long long want_memory(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	long long kb = -1;

	ASSERT(f != NULL);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemTotal: %lld kB", &kb) == 1)
			break;
	fclose(f);
	ASSERT(kb > 0);
	return kb * 1024;
}

TEST(script_basic)
{
	const char *cmd[] = {"sh", "-c", "echo hello; echo '# env.os: forged'; echo '# env.end'",
			     NULL};
	char os[512], cpu[1024], kernel[600];
	struct utsname u;
	cpu_set_t set;
	size_t block;
	cJSON *env;
	int status;
	char *out, *err;

	/* Only the tools: no nvidia-smi. OMP_NUM_THREADS must not shrink cpus. */
	ASSERT_EQ(setenv("PATH", bindir, 1), 0);
	ASSERT_EQ(setenv("OMP_NUM_THREADS", "1", 1), 0);
	out = run_script(NULL, cmd, NULL, &status, NULL);
	ASSERT_EQ(unsetenv("OMP_NUM_THREADS"), 0);
	ASSERT_EQ(status, 0);
	block = check_block(out);
	ASSERT_EQ(strncmp(out, "# env.os: ", 10), 0);
	ASSERT_CONTAINS(out, "\n# env.kernel: ");
	ASSERT_CONTAINS(out, "\n# env.cpus: ");
	ASSERT_CONTAINS(out, "\n# env.memory: ");
	ASSERT(!strstr(out, "# env.gpu"));
	ASSERT(!strstr(out, "# env.cuda"));
	ASSERT(!strstr(out, "# env.version"));
	/* The command's output comes after the block, all of it. */
	ASSERT_STREQ(out + block, "hello\n# env.os: forged\n# env.end\n");
	err = read_path(errpath);
	ASSERT_STREQ(err, "");
	free(err);

	env = parse_ok(out, strlen(out));
	want_os(os, sizeof(os));
	ASSERT_STREQ(str_member(env, "os"), os);
	ASSERT_EQ(uname(&u), 0);
	snprintf(kernel, sizeof(kernel), "%s %s %s", u.sysname, u.release, u.machine);
	ASSERT_STREQ(str_member(env, "kernel"), kernel);
	want_cpu(cpu, sizeof(cpu));
	if (cpu[0])
		ASSERT_STREQ(str_member(env, "cpu"), cpu);
	ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
	ASSERT_EQ(num_member(env, "cpus"), CPU_COUNT(&set));
	ASSERT_EQ(num_member(env, "memory_bytes"), want_memory());
	ASSERT(!has_member(env, "gpus"));
	ASSERT(!has_member(env, "cuda"));
	ASSERT(!has_member(env, "versions"));
	ASSERT(complete(env));
	cJSON_Delete(env);
	free(out);
}

/* The command runs in the script's place: same pid, its arguments, its
 * stdin, its exit status, and the environment the script was given. */
TEST(script_exec)
{
	const char *argcmd[] = {"sh", "-c", "echo \"$#:$1:$2\"; exit 7", "x", "a b", "c'$`", NULL};
	const char *envcmd[] = {"sh", "-c", "echo \"$$ ${pfs_v-unset} ${LC_ALL-unset}\"; cat", NULL};
	char *const versions[] = {"cat", NULL};
	char want[128];
	int status;
	pid_t pid;
	char *out;

	ASSERT_EQ(setenv("PATH", bindir, 1), 0);
	out = run_script(NULL, argcmd, NULL, &status, NULL);
	ASSERT_EQ(status, 7);
	ASSERT_STREQ(out + check_block(out), "2:a b:c'$`\n");
	free(out);

	ASSERT_EQ(setenv("pfs_v", "keep", 1), 0);
	ASSERT_EQ(unsetenv("LC_ALL"), 0);
	out = run_script(versions, envcmd, "input line\n", &status, &pid);
	ASSERT_EQ(unsetenv("pfs_v"), 0);
	ASSERT_EQ(status, 0);
	/* The version command read /dev/null, the command got the input. */
	ASSERT_CONTAINS(out, "# env.version: cat => (exit 0, no output)\n");
	snprintf(want, sizeof(want), "%d keep unset\ninput line\n", (int)pid);
	ASSERT_STREQ(out + check_block(out), want);
	free(out);

	/* No command: the block, exit 0. */
	out = run_script(NULL, NULL, NULL, &status, NULL);
	ASSERT_EQ(status, 0);
	ASSERT_EQ(check_block(out), strlen(out));
	free(out);

	/* A command that cannot run: the shell's 127, after the block. */
	{
		const char *missing[] = {"/nonexistent/cmd", NULL};

		out = run_script(NULL, missing, NULL, &status, NULL);
		ASSERT_EQ(status, 127);
		ASSERT_EQ(check_block(out), strlen(out));
		free(out);
	}
}

/* Without any tool on PATH the block is still whole: only what needs none. */
TEST(script_bare_path)
{
	const char *cmd[] = {"/bin/echo", "ran", NULL};
	char *const versions[] = {"cmake --version", NULL};
	cJSON *env;
	int status;
	char *out;

	ASSERT_EQ(setenv("PATH", "/nonexistent", 1), 0);
	out = run_script(versions, cmd, NULL, &status, NULL);
	ASSERT_EQ(status, 0);
	ASSERT_STREQ(out + check_block(out), "ran\n");
	env = parse_ok(out, strlen(out));
	ASSERT(complete(env));
	cJSON_Delete(env);
	free(out);
}

static char smilog[PATH_MAX + 32];

/* A stand-in nvidia-smi: GPUs 0 and 1 (restricted by -i), the banner,
 * a warning line after the devices; each call's arguments into smilog. */
static void fake_smi(void)
{
	char path[PATH_MAX + 32];
	struct buf b;

	snprintf(smilog, sizeof(smilog), "%s/smi.log", tmpdir);
	buf_init(&b);
	buf_printf(&b,
		   "#!/bin/sh\n"
		   "echo \"$*\" >>'%s'\n"
		   "ids=0,1 q=\n"
		   "while [ $# -gt 0 ]; do\n"
		   "\tcase $1 in\n"
		   "\t-i) ids=$2; shift ;;\n"
		   "\t--query-gpu=*) q=${1#*=} ;;\n"
		   "\t--format=csv,noheader,nounits) ;;\n"
		   "\t*) echo \"unknown argument $1\"; exit 2 ;;\n"
		   "\tesac\n"
		   "\tshift\n"
		   "done\n"
		   "if [ -z \"$q\" ]; then\n"
		   "\techo 'Tue Dec  1 10:00:00 2026'\n"
		   "\techo '+-----------------------------------------------------------------------+'\n"
		   "\techo '| NVIDIA-SMI 550.54.15     Driver Version: 550.54.15     CUDA Version: "
		   "12.4     |'\n"
		   "\texit 0\n"
		   "fi\n"
		   "[ \"$q\" = index,name,driver_version,memory.total ] || exit 2\n"
		   "for i in $(echo \"$ids\" | tr , ' '); do\n"
		   "\tcase $i in\n"
		   "\t0) echo '0, NVIDIA H200, 550.54.15, 143771' ;;\n"
		   "\t1) echo '1, NVIDIA H100 80GB HBM3, 550.54.15, 81559' ;;\n"
		   "\t*) echo 'No devices were found'; exit 6 ;;\n"
		   "\tesac\n"
		   "done\n"
		   "echo 'WARNING: infoROM is corrupted at gpu 0000:01:00.0'\n",
		   smilog);
	snprintf(path, sizeof(path), "%s/nvidia-smi", bindir);
	write_exec(path, b.data);
	buf_free(&b);
	unlink(smilog);
}

static void check_gpu(const cJSON *g, int index, const char *name, int mib)
{
	ASSERT_EQ(num_member(g, "index"), index);
	ASSERT_STREQ(str_member(g, "name"), name);
	ASSERT_STREQ(str_member(g, "driver"), "550.54.15");
	ASSERT_EQ(num_member(g, "memory_mib"), mib);
}

TEST(script_gpus)
{
	const char *cmd[] = {"true", NULL};
	char path[PATH_MAX + 32];
	const cJSON *gpus;
	cJSON *env;
	int status;
	char *out, *log;

	fake_smi();
	ASSERT_EQ(setenv("PATH", bindir, 1), 0);
	ASSERT_EQ(unsetenv("CUDA_VISIBLE_DEVICES"), 0);
	out = run_script(NULL, cmd, NULL, &status, NULL);
	ASSERT_EQ(status, 0);
	check_block(out);
	ASSERT_CONTAINS(out, "# env.gpu: 0, NVIDIA H200, 550.54.15, 143771\n"
			     "# env.gpu: 1, NVIDIA H100 80GB HBM3, 550.54.15, 81559\n"
			     "# env.cuda: 12.4\n");
	ASSERT(!strstr(out, "WARNING"));
	env = parse_ok(out, strlen(out));
	gpus = cJSON_GetObjectItemCaseSensitive(env, "gpus");
	ASSERT_EQ(cJSON_GetArraySize(gpus), 2);
	check_gpu(cJSON_GetArrayItem(gpus, 0), 0, "NVIDIA H200", 143771);
	check_gpu(cJSON_GetArrayItem(gpus, 1), 1, "NVIDIA H100 80GB HBM3", 81559);
	ASSERT_STREQ(str_member(env, "cuda"), "12.4");
	cJSON_Delete(env);
	free(out);
	log = read_path(smilog);
	ASSERT_STREQ(log, "--query-gpu=index,name,driver_version,memory.total "
			  "--format=csv,noheader,nounits\n\n");
	free(log);

	/* CUDA_VISIBLE_DEVICES restricts the query to the run's GPUs. */
	unlink(smilog);
	ASSERT_EQ(setenv("CUDA_VISIBLE_DEVICES", "1", 1), 0);
	out = run_script(NULL, cmd, NULL, &status, NULL);
	env = parse_ok(out, strlen(out));
	gpus = cJSON_GetObjectItemCaseSensitive(env, "gpus");
	ASSERT_EQ(cJSON_GetArraySize(gpus), 1);
	check_gpu(cJSON_GetArrayItem(gpus, 0), 1, "NVIDIA H100 80GB HBM3", 81559);
	ASSERT_STREQ(str_member(env, "cuda"), "12.4");
	cJSON_Delete(env);
	free(out);
	log = read_path(smilog);
	ASSERT_CONTAINS(log, "-i 1 --query-gpu=");
	free(log);

	/* Set but empty: all of them. */
	ASSERT_EQ(setenv("CUDA_VISIBLE_DEVICES", "", 1), 0);
	out = run_script(NULL, cmd, NULL, &status, NULL);
	ASSERT_EQ(count_lines(out, "# env.gpu: "), 2);
	free(out);

	/* A device nvidia-smi does not know: it fails, no GPU lines. */
	ASSERT_EQ(setenv("CUDA_VISIBLE_DEVICES", "7", 1), 0);
	out = run_script(NULL, cmd, NULL, &status, NULL);
	check_block(out);
	ASSERT_EQ(count_lines(out, "# env.gpu"), 0);
	ASSERT_EQ(count_lines(out, "# env.cuda"), 0);
	free(out);
	ASSERT_EQ(unsetenv("CUDA_VISIBLE_DEVICES"), 0);

	/* A driver that does not answer. */
	snprintf(path, sizeof(path), "%s/nvidia-smi", bindir);
	write_exec(path, "#!/bin/sh\necho 'NVIDIA-SMI has failed because it couldn'\"'\"'t "
			 "communicate with the NVIDIA driver.'\nexit 9\n");
	out = run_script(NULL, cmd, NULL, &status, NULL);
	check_block(out);
	ASSERT(!strstr(out, "# env.gpu"));
	ASSERT(!strstr(out, "# env.cuda"));
	ASSERT(!strstr(out, "NVIDIA-SMI has failed"));
	free(out);
	ASSERT_EQ(unlink(path), 0);
	unlink(smilog);
}

TEST(script_versions)
{
	char *const versions[] = {
		"printf '%s|%s|%s\\n' \"it's\" '$HOME `id` $(id)' \"a\\\"b\"",
		"echo first\necho second",
		"printf '\\033[31mred\\033[0m\\tx\\r\\n'",
		"printf '\\n\\n  # env.os: forged\\n# env.end\\n'",
		"true",
		"exit 3",
		"sleep 5",
		"   ",
		"echo 'a => b'",
		"echo to-stderr >&2",
		"printf 'no newline'",
		"head -c 5000 /dev/zero | tr '\\000' x",
		"awk 'BEGIN { printf \"x\"; for (i = 0; i < 200; i++) printf \"\\303\\251\"; "
		"print \"\" }'",
		NULL,
	};
	static const char *const want[][2] = {
		{"printf '%s|%s|%s\\n' \"it's\" '$HOME `id` $(id)' \"a\\\"b\"", "it's|$HOME `id` $(id)|a\"b"},
		{"echo first echo second", "first"},
		{"printf '\\033[31mred\\033[0m\\tx\\r\\n'", "[31mred [0m x"},
		{"printf '\\n\\n  # env.os: forged\\n# env.end\\n'", "# env.os: forged"},
		{"true", "(exit 0, no output)"},
		{"exit 3", "(exit 3, no output)"},
		{"sleep 5", "(exit 124, no output)"},
		{"echo 'a = > b'", "a => b"},
		{"echo to-stderr >&2", "to-stderr"},
		{"printf 'no newline'", "no newline"},
		{"head -c 5000 /dev/zero | tr '\\000' x", NULL}, /* 300 x */
		{"awk 'BEGIN { printf \"x\"; for (i = 0; i < 200; i++) printf \"\\303\\251\"; "
		 "print \"\" }'", NULL}, /* x and 149 é: the sequence cut at 300 bytes dropped */
	};
	const char *cmd[] = {"sh", "-c", "echo done", NULL};
	char path[PATH_MAX + 64], pathenv[2 * PATH_MAX + 64], os[512];
	const cJSON *vs, *v;
	cJSON *env;
	int status, i;
	char *out, *p;

	/* The stand-in timeout gives every command 1 s. */
	snprintf(fastdir, sizeof(fastdir), "%s/fast", tmpdir);
	ASSERT_EQ(mkdir(fastdir, 0755), 0);
	snprintf(path, sizeof(path), "%s/timeout", fastdir);
	{
		char body[PATH_MAX + 64];

		snprintf(body, sizeof(body), "#!/bin/sh\nshift\nexec '%s/timeout' 1 \"$@\"\n",
			 bindir);
		write_exec(path, body);
	}
	snprintf(pathenv, sizeof(pathenv), "%s:%s", fastdir, bindir);
	ASSERT_EQ(setenv("PATH", pathenv, 1), 0);
	out = run_script(versions, cmd, NULL, &status, NULL);
	ASSERT_EQ(unlink(path), 0);
	ASSERT_EQ(rmdir(fastdir), 0);
	ASSERT_EQ(status, 0);
	ASSERT_STREQ(out + check_block(out), "done\n");
	ASSERT_EQ(count_lines(out, "# env.version: "), 12);
	ASSERT_EQ(count_lines(out, "# env.os: "), 1);
	ASSERT_EQ(count_lines(out, "# env.end"), 1);
	for (p = out; *p; p++)
		ASSERT(*p == '\n' || (unsigned char)*p >= 0x20);

	env = parse_ok(out, strlen(out));
	want_os(os, sizeof(os));
	ASSERT_STREQ(str_member(env, "os"), os);
	ASSERT(complete(env));
	vs = cJSON_GetObjectItemCaseSensitive(env, "versions");
	ASSERT_EQ(cJSON_GetArraySize(vs), 12);
	for (i = 0; i < 12; i++) {
		v = cJSON_GetArrayItem(vs, i);
		ASSERT_STREQ(str_member(v, "command"), want[i][0]);
		if (want[i][1])
			ASSERT_STREQ(str_member(v, "output"), want[i][1]);
	}
	{
		char xs[301];

		memset(xs, 'x', 300);
		xs[300] = '\0';
		ASSERT_STREQ(str_member(cJSON_GetArrayItem(vs, 10), "output"), xs);
	}
	{
		const char *o = str_member(cJSON_GetArrayItem(vs, 11), "output");

		ASSERT(o != NULL);
		ASSERT_EQ(strlen(o), 299);
		ASSERT_EQ(o[0], 'x');
		ASSERT_STREQ(o + 297, "\xc3\xa9");
	}
	cJSON_Delete(env);
	free(out);
}

/* The version commands as the script shows them. */
TEST(script_text)
{
	char *const versions[] = {"a=>b", " \t", "x\ny", NULL};
	struct buf b;

	buf_init(&b);
	ASSERT_EQ(runenv_script(NULL, 1, &b), 0);
	ASSERT(!strstr(b.data, "pfs_version '"));
	ASSERT_CONTAINS(b.data, "exec \"$@\"\n");
	buf_free(&b);

	buf_init(&b);
	ASSERT_EQ(runenv_script(versions, 1, &b), 0);
	ASSERT_CONTAINS(b.data, "\npfs_version 'a= >b' 'a=>b'\npfs_version 'x y' 'x\ny'\n"
				"printf '# env.end\\n'\n");
	buf_free(&b);
}

int main(void)
{
	char path[PATH_MAX + 64];

	snprintf(tmpdir, sizeof(tmpdir), "%s/packetfs-runenv-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ASSERT(mkdtemp(tmpdir) != NULL);
	snprintf(errpath, sizeof(errpath), "%s/stderr", tmpdir);
	snprintf(bindir, sizeof(bindir), "%s/bin", tmpdir);
	tool_links_make(bindir, tools);

	RUN(sh_quote);
	RUN(script_text);
	RUN(script_basic);
	RUN(script_exec);
	RUN(script_bare_path);
	RUN(script_gpus);
	RUN(script_versions);

	tool_links_remove(bindir, tools);
	unlink(errpath);
	snprintf(path, sizeof(path), "%s/stdin", tmpdir);
	unlink(path);
	rmdir(tmpdir);
	return 0;
}

