/*
 * proc.h - the one start of a program: every child process packetfs runs
 * (a stage, a recipe, a Slurm command, nvidia-smi, git, fusermount3)
 * begins in proc_start(), the only place in the tree that calls
 * posix_spawn, vfork or execve for a program. What happens next is the
 * caller's: capture.h runs it to its end under a deadline, runner.h
 * follows it on a libuv loop, slurm_cmd.c reads its two pipes on the loop.
 *
 * The child: argv[0] looked up as execvp does (a name without '/' in the
 * directories of PATH, taken from the child's environment; a file the
 * kernel does not take for an executable runs with /bin/sh), no shell
 * otherwise; the given environment (or this process's); stdin, stdout and
 * stderr as the spec says; in a process group of its own (pgid == pid) or
 * a session of its own (sid == pgid == pid), so that one kill(-pid) ends
 * it and what it started; every signal at its default and none blocked;
 * in the given working directory; optionally as another user (groups,
 * group id, user id set in that order, each checked, before the working
 * directory is entered). Every other descriptor of this process stays
 * closed in the child as long as it is close-on-exec.
 *
 * Threads: proc_start may be called from any thread; it blocks only until
 * the child has called execve (or failed to).
 */
#ifndef PACKETFS_PROC_H
#define PACKETFS_PROC_H

#include <stddef.h>
#include <sys/types.h>

/* Where the child's stdin comes from. */
enum proc_in {
	PROC_IN_NULL = 0,    /* /dev/null */
	PROC_IN_BYTES,       /* in_data[in_len], copied into an anonymous file
			      * at the start, then end of file */
	PROC_IN_FD,          /* in_fd, the caller's (left open) */
};

/* Where the child's stdout, or stderr, goes. */
enum proc_out {
	PROC_OUT_NULL = 0,   /* /dev/null */
	PROC_OUT_PIPE,       /* a new pipe; its read end is returned */
	PROC_OUT_FD,         /* the caller's descriptor (left open) */
	PROC_OUT_INHERIT,    /* this process's own stream */
	PROC_OUT_STDOUT,     /* stderr only: wherever stdout goes (merged) */
};

/* The user a child runs as. */
struct proc_cred {
	uid_t uid;
	gid_t gid;             /* the primary group */
	const gid_t *groups;   /* every group, the primary one included */
	int ngroups;
};

struct proc_spec {
	char *const *argv;       /* NULL-terminated; argv[0] is the program */
	char *const *env;        /* NULL-terminated; NULL: this process's */
	const char *cwd;         /* NULL: this process's */
	enum proc_in in;
	const char *in_data;     /* PROC_IN_BYTES */
	size_t in_len;
	int in_fd;               /* PROC_IN_FD */
	enum proc_out out;       /* stdout: PROC_OUT_STDOUT is not allowed */
	int out_fd;              /* PROC_OUT_FD */
	enum proc_out err;       /* stderr */
	int err_fd;              /* PROC_OUT_FD */
	int session;             /* 1: a new session; 0: a new process group */
	/* NULL: this process's user. Otherwise the child takes these
	 * credentials before it enters cwd and execs; this process must be
	 * privileged (else -EPERM). */
	const struct proc_cred *cred;
};

/* A started child. The descriptors are close-on-exec and blocking; each is
 * -1 when there is none. */
struct proc {
	pid_t pid;       /* == its process group id (and session id) */
	int pidfd;       /* pidfd_open(pid), or -1 where the kernel has none */
	int out;         /* read end of the stdout pipe (PROC_OUT_PIPE) */
	int err;         /* read end of the stderr pipe (PROC_OUT_PIPE) */
};

/*
 * Starts the child spec describes and fills *p. The child is not waited
 * for: the caller reaps it by its pid (waitpid(p->pid), never
 * waitpid(-1)) and closes p's descriptors (proc_close).
 *
 * Returns 0, or a negative errno, p->pid 0 and p's descriptors -1 (nothing
 * is left to reap):
 * -EINVAL (no argv[0], or a stream mode that does not apply), -ENOENT
 * (no such program), -EACCES (not executable), -ENOEXEC, -ENOMEM,
 * -EPERM (cred without the privilege), or another errno of the step that
 * failed (pipe, the working directory, the exec). Any thread.
 */
int proc_start(const struct proc_spec *spec, struct proc *p);

/* Closes p's descriptors (not the child: that is the caller's to reap)
 * and sets them to -1. Any thread. */
void proc_close(struct proc *p);

#endif
