/*
 * test-push.c - unit tests of engine/git/push.c: the environment of a
 * publish's git push, and the reason a failed push gives, read from the
 * output of git 2.39 (Debian 12) as it is: --porcelain lines on stdout and
 * messages on stderr, together, as the stage log holds them. Each case's
 * text was taken from a real push (tests/pipeline/push-*.sh make the same
 * failures happen against real servers).
 */
#include <stdio.h>
#include <string.h>

#include "push.h"
#include "test.h"
#include "util.h"

/* What git says when ssh failed it or a path holds no repository. */
#define COULD_NOT_READ                                          \
	"fatal: Could not read from remote repository.\n\n"     \
	"Please make sure you have the correct access rights\n" \
	"and the repository exists.\n"

/* The reason for output (exit code 1 unless rc says otherwise). */
static char why[768];

static enum push_kind reason(const char *remote, const char *output, int rc)
{
	memset(why, 'x', sizeof(why));
	return push_reason(remote, "packetfs/fix-1", output, rc, why, sizeof(why));
}

/* The reason for output (exit code rc) is of kind, and want says it. */
static void expect_reason(const char *remote, const char *output, int rc, enum push_kind kind,
			  const char *want)
{
	ASSERT_EQ(reason(remote, output, rc), kind);
	ASSERT_STREQ(why, want);
}

/* Whether env holds var exactly. */
static int has(char **env, const char *var)
{
	size_t i;

	for (i = 0; env && env[i]; i++)
		if (strcmp(env[i], var) == 0)
			return 1;
	return 0;
}

/* Whether env holds a variable called name. */
static int has_name(char **env, const char *name)
{
	size_t i, n = strlen(name);

	for (i = 0; env && env[i]; i++)
		if (strncmp(env[i], name, n) == 0 && env[i][n] == '=')
			return 1;
	return 0;
}

TEST(env)
{
	char *in[] = { "HOME=/home/u", "PATH=/usr/bin:/bin", "SSH_AUTH_SOCK=/tmp/agent.1",
		       "GIT_SSH_COMMAND=ssh -i /k", "GIT_DIR=/elsewhere/.git",
		       "GIT_WORK_TREE=/elsewhere", "GIT_INDEX_FILE=/elsewhere/.git/index",
		       "GIT_TERMINAL_PROMPT=1", "PACKET_ITEM=fix-1", "RECIPE_NAME=01-build",
		       "LC_ALL=de_DE.UTF-8", "LANGUAGE=de", "LANG=de_DE.UTF-8",
		       "GIT_CONFIG_GLOBAL=/home/u/.gitconfig-work", "GIT_ASKPASS=/usr/bin/ask",
		       NULL };
	char *ctype[] = { "LC_ALL=de_DE.UTF-8", "LC_CTYPE=C.UTF-8", NULL };
	char **env = push_env(in);

	ASSERT(env != NULL);
	/* The user's transport setup stays. */
	ASSERT(has(env, "HOME=/home/u"));
	ASSERT(has(env, "PATH=/usr/bin:/bin"));
	ASSERT(has(env, "SSH_AUTH_SOCK=/tmp/agent.1"));
	ASSERT(has(env, "GIT_SSH_COMMAND=ssh -i /k"));
	ASSERT(has(env, "GIT_CONFIG_GLOBAL=/home/u/.gitconfig-work"));
	ASSERT(has(env, "GIT_ASKPASS=/usr/bin/ask"));
	ASSERT(has(env, "LANG=de_DE.UTF-8"));
	/* git finds the repository from its working directory. */
	ASSERT(!has_name(env, "GIT_DIR"));
	ASSERT(!has_name(env, "GIT_WORK_TREE"));
	ASSERT(!has_name(env, "GIT_INDEX_FILE"));
	ASSERT(!has_name(env, "PACKET_ITEM"));
	ASSERT(!has_name(env, "RECIPE_NAME"));
	/* No prompts; untranslated messages, the character set kept. */
	ASSERT(has(env, "GIT_TERMINAL_PROMPT=0"));
	ASSERT(!has(env, "GIT_TERMINAL_PROMPT=1"));
	ASSERT(!has_name(env, "LC_ALL"));
	ASSERT(!has_name(env, "LANGUAGE"));
	ASSERT(has(env, "LC_MESSAGES=C"));
	ASSERT(has(env, "LC_CTYPE=de_DE.UTF-8"));
	ASSERT_EQ(strv_len(env), 10);
	strv_free(env);

	/* An LC_CTYPE of its own wins over LC_ALL's. */
	env = push_env(ctype);
	ASSERT(env != NULL);
	ASSERT(has(env, "LC_CTYPE=C.UTF-8"));
	ASSERT(!has(env, "LC_CTYPE=de_DE.UTF-8"));
	ASSERT_EQ(strv_len(env), 3);
	strv_free(env);

	env = push_env(NULL);
	ASSERT(env != NULL);
	ASSERT_EQ(strv_len(env), 2);
	strv_free(env);
}

TEST(ok)
{
	expect_reason("origin", "To ../remote.git\n"
		      "*\t0bf259b47f04245d4ac9f4c5f4a165b8c5fef308:refs/heads/packetfs/fix-1\t[new branch]\n"
		      "Done\n", 0, PUSH_OK, "");
	expect_reason("origin", NULL, 0, PUSH_OK, "");
}

TEST(nonff)
{
	static const char *const hint =
		"error: failed to push some refs to '../remote.git'\n"
		"hint: Updates were rejected because the remote contains work that you do\n"
		"hint: not have locally. This is usually caused by another repository pushing\n"
		"hint: to the same ref. You may want to first integrate the remote changes\n"
		"hint: (e.g., 'git pull ...') before pushing again.\n"
		"hint: See the 'Note about fast-forwards' in 'git push --help' for details.\n";
	char out[2048];

	snprintf(out, sizeof(out), "To ../remote.git\n!\t013dc3b3b290d8bf7a58ec023b839bc30179cf89:"
		 "refs/heads/packetfs/fix-1\t[rejected] (fetch first)\nDone\n%s", hint);
	expect_reason("origin", out, 1, PUSH_NONFF,
		      "push to origin refused: non-fast-forward (the remote's packetfs/fix-1 "
		      "has commits the item branch lacks)");
	/* The remote's commits fetched already. */
	expect_reason("upstream", "To ../remote.git\n!\t013dc3b3b290d8bf7a58ec023b839bc30179cf89:"
		      "refs/heads/packetfs/fix-1\t[rejected] (non-fast-forward)\nDone\n"
		      "error: failed to push some refs to '../remote.git'\n", 1, PUSH_NONFF,
		      "push to upstream refused: non-fast-forward (the remote's packetfs/fix-1 "
		      "has commits the item branch lacks)");
}

TEST(rejected)
{
	expect_reason("origin", "remote: no pushes on Fridays\n"
		      "To /srv/remote.git\n"
		      "!\t013dc3b3b290d8bf7a58ec023b839bc30179cf89:refs/heads/packetfs/fix-1\t"
		      "[remote rejected] (pre-receive hook declined)\nDone\n"
		      "error: failed to push some refs to '/srv/remote.git'\n", 1, PUSH_REJECTED,
		      "push to origin refused: [remote rejected] (pre-receive hook declined)");
}

TEST(auth)
{
	/* A credential helper's password that the server refused. */
	expect_reason("origin", "fatal: Authentication failed for "
		      "'http://127.0.0.1:8080/git/remote.git/'\n", 128, PUSH_AUTH,
		      "push to origin refused: authentication failed "
		      "(http://127.0.0.1:8080/git/remote.git/)");
	/* No credentials at all, and no terminal to ask on. */
	expect_reason("origin", "fatal: could not read Username for 'http://127.0.0.1:8080': "
		      "terminal prompts disabled\n", 128, PUSH_AUTH,
		      "push to origin refused: authentication failed (no username or password "
		      "for http://127.0.0.1:8080: no credential helper gave one)");
	/* ssh without a key the server takes (the agent empty); ssh ends lines with \r\n. */
	expect_reason("origin", "root@127.0.0.1: Permission denied (publickey).\r\n"
		      COULD_NOT_READ, 128, PUSH_AUTH,
		      "push to origin refused: authentication failed "
		      "(root@127.0.0.1: Permission denied (publickey))");
	expect_reason("origin", "fatal: unable to access 'https://h.invalid/r.git/': "
		      "The requested URL returned error: 403\n", 128, PUSH_AUTH,
		      "push to origin refused: authentication failed (unable to access "
		      "'https://h.invalid/r.git/': The requested URL returned error: 403)");
}

TEST(hostkey)
{
	expect_reason("origin", "Host key verification failed.\r\n"
		      COULD_NOT_READ, 128, PUSH_HOSTKEY,
		      "push to origin failed: the remote's host key is not trusted "
		      "(Host key verification failed)");
}

TEST(unreachable)
{
	expect_reason("origin", "fatal: unable to access 'http://127.0.0.1:1/x.git/': Failed to "
		      "connect to 127.0.0.1 port 1 after 0 ms: Couldn't connect to server\n",
		      128, PUSH_UNREACHABLE,
		      "push to origin failed: remote unreachable (unable to access "
		      "'http://127.0.0.1:1/x.git/': Failed to connect to 127.0.0.1 port 1 after 0 ms: "
		      "Couldn't connect to server)");
	ASSERT_EQ(reason("origin", "fatal: unable to access 'http://nosuch.invalid/x.git/': Could "
			 "not resolve host: nosuch.invalid\n", 128), PUSH_UNREACHABLE);
	ASSERT_CONTAINS(why, "remote unreachable (");
	ASSERT_CONTAINS(why, "Could not resolve host: nosuch.invalid)");
	expect_reason("origin", "ssh: connect to host 127.0.0.1 port 1: Connection refused\r\n"
		      COULD_NOT_READ, 128, PUSH_UNREACHABLE,
		      "push to origin failed: remote unreachable (connect to host 127.0.0.1 "
		      "port 1: Connection refused)");
	expect_reason("origin", "ssh: Could not resolve hostname nosuchhost.invalid: Name or "
		      "service not known\r\nfatal: Could not read from remote repository.\n", 128,
		      PUSH_UNREACHABLE,
		      "push to origin failed: remote unreachable (Could not resolve hostname "
		      "nosuchhost.invalid: Name or service not known)");
	/* A path (also a relative one, or file://) with no repository. */
	expect_reason("origin", "fatal: '../nowhere.git' does not appear to be a git repository\n"
		      COULD_NOT_READ, 128, PUSH_UNREACHABLE,
		      "push to origin failed: remote unreachable (no git repository at "
		      "../nowhere.git)");
	ASSERT_EQ(reason("/srv/x.git", "fatal: '/srv/x.git' does not appear to be a git repository\n"
			 "fatal: Could not read from remote repository.\n", 128), PUSH_UNREACHABLE);
	expect_reason("origin", "remote: Repository not found.\nfatal: repository "
		      "'http://127.0.0.1:8080/git/nosuch.git/' not found\n", 128, PUSH_UNREACHABLE,
		      "push to origin failed: remote unreachable (no git repository at "
		      "http://127.0.0.1:8080/git/nosuch.git/)");
}

TEST(no_remote)
{
	expect_reason("upstream", "fatal: 'upstream' does not appear to be a git repository\n"
		      COULD_NOT_READ, 128, PUSH_NO_REMOTE,
		      "push to upstream failed: no such remote");
}

TEST(other)
{
	/* git's first error line, not the generic one after it. */
	expect_reason("origin", "error: cannot run nosuchssh: No such file or directory\n"
		      "fatal: unable to fork\n", 128, PUSH_OTHER,
		      "push to origin failed: cannot run nosuchssh: No such file or directory");
	expect_reason("origin", "error: failed to push some refs to 'origin'\n", 1, PUSH_OTHER,
		      "push to origin failed: failed to push some refs to 'origin'");
	expect_reason("origin", "", 1, PUSH_OTHER,
		      "push to origin failed: git push exited with code 1");
	expect_reason("origin", NULL, 128, PUSH_OTHER,
		      "push to origin failed: git push exited with code 128");
}

TEST(cut)
{
	char small[24];

	memset(small, 'x', sizeof(small));
	ASSERT_EQ(push_reason("origin", "packetfs/fix-1", "fatal: Authentication failed for "
			      "'http://h/'\n", 128, small, sizeof(small)), PUSH_AUTH);
	ASSERT_EQ(strlen(small), sizeof(small) - 1);
	ASSERT_EQ(push_reason("origin", "packetfs/fix-1", "", 1, small, 0), PUSH_OTHER);
}

int main(void)
{
	RUN(env);
	RUN(ok);
	RUN(nonff);
	RUN(rejected);
	RUN(auth);
	RUN(hostkey);
	RUN(unreachable);
	RUN(no_remote);
	RUN(other);
	RUN(cut);
	return 0;
}
