/*
 * packet_who.c - who makes a change (packet_int.h: packet__who_fill,
 * packet__who_init, packet__who_free): the caller's uid and pid as the
 * FUSE request gives them, its command name, and the stage whose process
 * it is (pipeline_active_stage_of), recorded with each revision.
 *
 * The command name is /proc/PID/comm (proc(5)). Opening that file costs
 * three system calls a commit (open, read, close), and a loop of `>>` in
 * one shell commits from one process over and over, so the last WHO_COMM
 * writers' files are kept open and read again with one pread(2). A kept
 * descriptor stays the process's it was opened for: a read of it after
 * the process has been reaped fails with ESRCH, even once its pid names
 * another process (the descriptor holds the old one's struct pid), so a
 * read that fails drops the descriptor and opens the pid's file afresh.
 * A read after an execve(2) gives the new name. Descriptors are opened
 * O_CLOEXEC: no child inherits one.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "packet_int.h"

void packet__who_init(struct engine *e)
{
	int i;

	pthread_mutex_init(&e->who_lock, NULL);
	for (i = 0; i < WHO_COMM; i++)
		e->who_comm[i].fd = -1;
}

void packet__who_free(struct engine *e)
{
	int i;

	for (i = 0; i < WHO_COMM; i++)
		if (e->who_comm[i].fd >= 0)
			close(e->who_comm[i].fd);
	pthread_mutex_destroy(&e->who_lock);
}

/* The command name of process pid into out (size bytes), without its
 * newline; "" when it cannot be read (the process is gone). */
static void comm_read(struct engine *e, pid_t pid, char *out, size_t size)
{
	char path[64];
	ssize_t n = -1;
	int i, fd;

	out[0] = '\0';
	pthread_mutex_lock(&e->who_lock);
	for (i = 0; i < WHO_COMM; i++) {
		if (e->who_comm[i].fd >= 0 && e->who_comm[i].pid == pid) {
			n = pread(e->who_comm[i].fd, out, size - 1, 0);
			if (n <= 0) {
				/* Reaped: the pid may be another process's now. */
				close(e->who_comm[i].fd);
				e->who_comm[i].fd = -1;
			}
			break;
		}
	}
	if (n <= 0) {
		snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		n = fd >= 0 ? pread(fd, out, size - 1, 0) : -1;
		if (n > 0) {
			i = e->who_next;
			e->who_next = (e->who_next + 1) % WHO_COMM;
			if (e->who_comm[i].fd >= 0)
				close(e->who_comm[i].fd);
			e->who_comm[i].pid = pid;
			e->who_comm[i].fd = fd;
		} else if (fd >= 0) {
			close(fd);
		}
	}
	pthread_mutex_unlock(&e->who_lock);
	out[n > 0 ? n : 0] = '\0';
	out[strcspn(out, "\n")] = '\0';
}

void packet__who_fill(struct engine *e, const struct pfs_caller *c, struct who_buf *wb)
{
	memset(wb, 0, sizeof(*wb));
	wb->w.uid = c ? c->uid : getuid();
	wb->w.pid = c ? c->pid : 0;
	if (c && c->pid > 0) {
		comm_read(e, c->pid, wb->comm, sizeof(wb->comm));
		pipeline_active_stage_of(e->pl, c->pid, wb->stage, sizeof(wb->stage));
	}
	wb->w.comm = wb->comm;
	wb->w.stage = wb->stage;
}
