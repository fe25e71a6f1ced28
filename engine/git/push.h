/*
 * push.h - what a publish's `git push` is (SPEC §5): its environment, and
 * what its output means when it fails.
 *
 * A publish stage pushes with the real git command line (pipe_push.c runs
 * it), so that the user's transport setup applies exactly as it does to a
 * `git push` typed in the repository: credential helpers, ssh config and
 * agent, url.<base>.insteadOf, relative remote paths. This module holds the
 * pure parts of that: the environment git gets, and the one-line reason a
 * failed push gives in last_error, read from git's own output. Both are
 * free of I/O and global state, so any thread may call them; the unit tests
 * feed them git 2.39's real messages (tests/unit/git/test-push.c).
 */
#ifndef PACKETFS_PUSH_H
#define PACKETFS_PUSH_H

#include <stddef.h>

/* What a failed push ran into. */
enum push_kind {
	PUSH_OK = 0,       /* git exited 0 */
	PUSH_AUTH,         /* the remote did not accept the credentials, or there were none */
	PUSH_HOSTKEY,      /* ssh does not trust the remote's host key */
	PUSH_NONFF,        /* the remote branch has commits the item branch lacks */
	PUSH_REJECTED,     /* the remote (or git) refused the update for another reason */
	PUSH_UNREACHABLE,  /* no connection, no such host, or no repository there */
	PUSH_NO_REMOTE,    /* the name is no configured remote (nor a path or URL) */
	PUSH_OTHER         /* anything else: git's own first error line */
};

/*
 * The environment of a publish's git push, made from env (the daemon's
 * environment, NULL-terminated; not changed): every variable of env except
 *  - those that would point git at another repository than its working
 *    directory (GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE, GIT_OBJECT_DIRECTORY,
 *    GIT_ALTERNATE_OBJECT_DIRECTORIES, GIT_COMMON_DIR, GIT_NAMESPACE,
 *    GIT_PREFIX) and the stage variables (PACKET_*, RECIPE_*);
 *  - the message locale: git's messages are read by push_reason, so they are
 *    asked for untranslated (LC_MESSAGES=C; LC_ALL and LANGUAGE dropped, an
 *    LC_ALL value kept as LC_CTYPE when LC_CTYPE is unset);
 * plus GIT_TERMINAL_PROMPT=0, so that git fails at once where it would ask
 * on a terminal. Nothing else is changed: credential helpers, askpass
 * programs, GIT_SSH_COMMAND / core.sshCommand and the ssh agent
 * (SSH_AUTH_SOCK) are the user's.
 * Returns a new strv (strv_free it), or NULL when out of memory.
 */
char **push_env(char *const *env);

/*
 * Classifies a git push that exited with exit_code (0: PUSH_OK, why gets
 * ""), from output, its stdout and stderr together (--porcelain lines and
 * messages, NUL-terminated; NULL is taken as ""). remote is the remote as
 * the pipeline names it, branch the item branch (e.g. "packetfs/x"). One
 * line goes into why (size > 0; cut to fit), e.g.
 *   push to origin refused: authentication failed (https://h/r.git/)
 *   push to origin refused: non-fast-forward (the remote's packetfs/x has
 *     commits the item branch lacks)
 *   push to origin failed: remote unreachable (Could not resolve host: h)
 *   push to origin failed: no such remote
 * Quoted URLs are git's own, which never carry a password. Returns the kind.
 */
enum push_kind push_reason(const char *remote, const char *branch, const char *output,
			   int exit_code, char *why, size_t size);

#endif
