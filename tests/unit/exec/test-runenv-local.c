/*
 * test-runenv-local.c - the environment block of a local run read by the
 * engine (engine/exec/runenv_local.c): the lines it writes before the
 * run plus what the script it leaves prints must be, byte for byte, what
 * the whole script prints where the run starts (runenv.c), on this machine,
 * with and without version commands, with a stand-in nvidia-smi on PATH,
 * and with the affinity mask narrowed to one CPU; the machine's facts read
 * once and kept (the opens of /proc/cpuinfo and /proc/meminfo counted by
 * fopen below). Then runenv_path_finds on executables, plain files,
 * directories and empty PATH entries.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runenv.h"
#include "test.h"
#include "tool-links.h"
#include "util.h"

static char tmpdir[PATH_MAX];
static int machine_opens; /* fopen of /proc/cpuinfo or /proc/meminfo */

/* fopen as libc's (the symbol is fopen64 where stdio.h redirects it for a
 * 64-bit off_t, as for the engine's code), counting opens of the machine's
 * facts. */
FILE *fopen(const char *path, const char *mode)
{
#ifdef __USE_FILE_OFFSET64
	static const char sym[] = "fopen64";
#else
	static const char sym[] = "fopen";
#endif
	FILE *(*real)(const char *, const char *) =
		(FILE * (*)(const char *, const char *))dlsym(RTLD_NEXT, sym);

	if (strcmp(path, "/proc/cpuinfo") == 0 || strcmp(path, "/proc/meminfo") == 0)
		machine_opens++;
	return real(path, mode);
}
static char bindir[PATH_MAX + 16]; /* links to the tools the script may use */

static const char *const tools[] = {
	"sh", "tr", "cut", "awk", "sed", "uname", "nproc", "getconf", "lscpu", "timeout", NULL,
};

static void write_exec(const char *path, const char *body)
{
	ASSERT_EQ(util_write_file(path, body, strlen(body)), 0);
	ASSERT_EQ(chmod(path, 0755), 0);
}

/* The stdout of `/bin/sh -c SCRIPT packetfs-run CMD...` run with PATH. */
static char *run(const char *script, const char *const *cmd, const char *path)
{
	const char *argv[16];
	size_t n = 0, i;
	struct buf out;
	char chunk[4096];
	ssize_t got;
	int fds[2], st;
	pid_t pid;

	argv[n++] = "/bin/sh";
	argv[n++] = "-c";
	argv[n++] = script;
	argv[n++] = RUNENV_ARG0;
	for (i = 0; cmd && cmd[i]; i++)
		argv[n++] = cmd[i];
	argv[n] = NULL;
	ASSERT_EQ(pipe(fds), 0);
	pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0) {
		int fd = open("/dev/null", O_RDWR);

		dup2(fd, 0);
		dup2(fd, 2);
		dup2(fds[1], 1);
		close(fds[0]);
		setenv("PATH", path, 1);
		execv("/bin/sh", (char *const *)argv);
		_exit(127);
	}
	close(fds[1]);
	buf_init(&out);
	while ((got = read(fds[0], chunk, sizeof(chunk))) > 0)
		ASSERT_EQ(buf_append(&out, chunk, (size_t)got), 0);
	close(fds[0]);
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	return out.data ? buf_steal(&out) : strdup("");
}

/* The whole script's output for versions with PATH path. */
static char *whole(char *const *versions, const char *path)
{
	struct buf script;
	char *out;

	buf_init(&script);
	ASSERT_EQ(runenv_script(versions, 1, &script), 0);
	out = run(script.data, NULL, path);
	buf_free(&script);
	return out;
}

/* Whether /proc/cpuinfo names a model (else the script must ask lscpu). */
static int cpuinfo_has_model(void)
{
	char *text = NULL;
	size_t len;
	int has;

	if (util_read_file("/proc/cpuinfo", 1 << 24, &text, &len))
		return 0;
	has = strncmp(text, "model name", 10) == 0 || strstr(text, "\nmodel name") != NULL;
	free(text);
	return has;
}

/* block + what script prints equals the whole script's output, and the
 * command runs after it. Returns whether block ended the block itself
 * (the run then starts as its command alone). */
static int check_same(char *const *versions, const char *path)
{
	const char *cmd[] = {"/bin/echo", "ran", NULL};
	struct buf block, script, both;
	char *want, *rest;
	int ended;

	buf_init(&block);
	buf_init(&script);
	ended = runenv_local(versions, path, &block, &script);
	ASSERT(ended == 0 || ended == 1);
	if (!cpuinfo_has_model()) {
		ASSERT_EQ(block.len, 0);
	} else {
		ASSERT(block.len > 0);
		ASSERT(ended || !strstr(script.data, "/proc/cpuinfo"));
	}
	if (ended) { /* the command runs itself, after the block */
		ASSERT_EQ(script.len, 0);
		ASSERT(block.len >= 10);
		ASSERT_STREQ(block.data + block.len - 10, "# env.end\n");
		rest = strdup("ran\n");
	} else {
		ASSERT(!strstr(block.data ? block.data : "", "# env.end"));
		rest = run(script.data, cmd, path);
	}
	want = whole(versions, path);
	buf_init(&both);
	ASSERT_EQ(buf_printf(&both, "%s%s", block.data ? block.data : "", rest), 0);
	{
		struct buf w;

		buf_init(&w);
		ASSERT_EQ(buf_printf(&w, "%sran\n", want), 0);
		ASSERT_STREQ(both.data, w.data);
		buf_free(&w);
	}
	free(want);
	free(rest);
	buf_free(&both);
	buf_free(&block);
	buf_free(&script);
	return ended;
}

TEST(same_as_script)
{
	char *const versions[] = {"echo v1", " \t", "sh --version || echo none", NULL};
	char *const blank[] = {" ", "\t", NULL};

	ASSERT_EQ(check_same(NULL, bindir), cpuinfo_has_model());
	ASSERT_EQ(check_same(blank, bindir), cpuinfo_has_model());
	ASSERT_EQ(check_same(versions, bindir), 0);
}

/* One CPU in the mask: the engine's thread and the script's child agree. */
TEST(same_with_one_cpu)
{
	cpu_set_t old, one;

	ASSERT_EQ(sched_getaffinity(0, sizeof(old), &old), 0);
	CPU_ZERO(&one);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &old)) {
			CPU_SET(c, &one);
			break;
		}
	ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
	check_same(NULL, bindir);
	{
		struct buf block, script;

		buf_init(&block);
		buf_init(&script);
		ASSERT(runenv_local(NULL, bindir, &block, &script) >= 0);
		if (block.len)
			ASSERT_CONTAINS(block.data, "# env.cpus: 1\n");
		buf_free(&block);
		buf_free(&script);
	}
	ASSERT_EQ(sched_setaffinity(0, sizeof(old), &old), 0);
}

/* A stand-in nvidia-smi on PATH: the script keeps the GPU lines. */
TEST(gpus_left_to_script)
{
	char dir[PATH_MAX + 32], smi[PATH_MAX + 64], path[2 * PATH_MAX + 64];
	struct buf block, script;
	char *out;

	snprintf(dir, sizeof(dir), "%s/gpu", tmpdir);
	ASSERT_EQ(mkdir(dir, 0755), 0);
	snprintf(smi, sizeof(smi), "%s/nvidia-smi", dir);
	write_exec(smi, "#!/bin/sh\ncase \"$*\" in *query-gpu*) echo '0, Stand-in GPU, 550.1, 81920' ;;"
			"*) echo '| NVIDIA-SMI 550.1  Driver Version: 550.1  CUDA Version: 12.4 |' ;;"
			"esac\n");
	snprintf(path, sizeof(path), "%s:%s", dir, bindir);
	ASSERT_EQ(check_same(NULL, path), 0);
	buf_init(&block);
	buf_init(&script);
	ASSERT_EQ(runenv_local(NULL, path, &block, &script), 0);
	out = run(script.data, NULL, path);
	ASSERT_CONTAINS(out, "# env.gpu: 0, Stand-in GPU, 550.1, 81920\n");
	ASSERT_CONTAINS(out, "# env.cuda: 12.4\n");
	free(out);
	buf_free(&block);
	buf_free(&script);
	ASSERT_EQ(unlink(smi), 0);
	ASSERT_EQ(rmdir(dir), 0);
}

TEST(path_finds)
{
	char dir[PATH_MAX + 32], file[PATH_MAX + 64], path[2 * PATH_MAX + 64], cwd[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s/finds", tmpdir);
	ASSERT_EQ(mkdir(dir, 0755), 0);
	snprintf(file, sizeof(file), "%s/plain", dir);
	ASSERT_EQ(util_write_file(file, "x", 1), 0);
	snprintf(file, sizeof(file), "%s/tool", dir);
	write_exec(file, "#!/bin/sh\n");
	snprintf(file, sizeof(file), "%s/adir", dir);
	ASSERT_EQ(mkdir(file, 0755), 0);

	snprintf(path, sizeof(path), "/nonexistent:%s", dir);
	ASSERT_EQ(runenv_path_finds(path, "tool"), 1);
	ASSERT_EQ(runenv_path_finds(path, "plain"), 0); /* not executable */
	ASSERT_EQ(runenv_path_finds(path, "adir"), 0);  /* a directory */
	ASSERT_EQ(runenv_path_finds(path, "missing"), 0);
	ASSERT_EQ(runenv_path_finds("/nonexistent", "tool"), 0);
	ASSERT_EQ(runenv_path_finds(NULL, "sh"), 1); /* sh's default path */
	/* An empty entry is the current directory. */
	ASSERT(getcwd(cwd, sizeof(cwd)) != NULL);
	ASSERT_EQ(chdir(dir), 0);
	ASSERT_EQ(runenv_path_finds("/nonexistent:", "tool"), 1);
	ASSERT_EQ(runenv_path_finds("/nonexistent", "tool"), 0);
	ASSERT_EQ(chdir(cwd), 0);

	ASSERT_EQ(rmdir(file), 0);
	snprintf(file, sizeof(file), "%s/tool", dir);
	ASSERT_EQ(unlink(file), 0);
	snprintf(file, sizeof(file), "%s/plain", dir);
	ASSERT_EQ(unlink(file), 0);
	ASSERT_EQ(rmdir(dir), 0);
}

/* The facts are read by the first run's probe and kept: later runs read
 * neither /proc/cpuinfo nor /proc/meminfo, and write the same block. */
static void test_facts_kept(void)
{
	struct buf first, block, script;
	int opens, i, rc;

	buf_init(&first);
	buf_init(&script);
	rc = runenv_local(NULL, bindir, &first, &script);
	ASSERT(rc == 0 || rc == 1);
	opens = machine_opens;
	for (i = 0; i < 3; i++) {
		buf_init(&block);
		script.len = 0;
		ASSERT_EQ(runenv_local(NULL, bindir, &block, &script), rc);
		ASSERT_EQ(block.len, first.len);
		ASSERT(block.len == 0 || strcmp(block.data, first.data) == 0);
		buf_free(&block);
	}
	ASSERT_EQ(machine_opens, opens);
	buf_free(&first);
	buf_free(&script);
}

int main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "%s/packetfs-runenv-local-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ASSERT(mkdtemp(tmpdir) != NULL);
	snprintf(bindir, sizeof(bindir), "%s/bin", tmpdir);
	tool_links_make(bindir, tools);

	RUN(same_as_script);
	RUN(same_with_one_cpu);
	RUN(gpus_left_to_script);
	RUN(facts_kept);
	RUN(path_finds);

	tool_links_remove(bindir, tools);
	rmdir(tmpdir);
	return 0;
}
