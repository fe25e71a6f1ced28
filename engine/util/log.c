/*
 * log.c - the daemon's log (util.h): stderr, syslog(3) or a file.
 *
 * The sink is chosen once before the threads start, so util_log reads it
 * without a lock; a file line is formatted whole and written with one
 * write(2) on an O_APPEND descriptor, so lines of concurrent threads (and
 * of other daemons logging to the same file) never interleave.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "util.h"

enum sink { SINK_STDERR, SINK_SYSLOG, SINK_FILE };

static enum sink sink = SINK_STDERR;
static int log_fd = -1;

int util_log_to_file(const char *path)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);

	if (fd < 0)
		return -errno;
	if (log_fd >= 0)
		close(log_fd);
	log_fd = fd;
	sink = SINK_FILE;
	return 0;
}

void util_log_to_syslog(void)
{
	openlog("packetfs", LOG_PID, LOG_DAEMON);
	sink = SINK_SYSLOG;
}

/* The word a file line shows for prio. */
static const char *level(int prio)
{
	switch (prio) {
	case LOG_EMERG:
	case LOG_ALERT:
	case LOG_CRIT:
	case LOG_ERR:
		return "error";
	case LOG_WARNING:
		return "warning";
	case LOG_NOTICE:
		return "notice";
	case LOG_INFO:
		return "info";
	default:
		return "debug";
	}
}

void util_log(int prio, const char *fmt, ...)
{
	char msg[2048], line[2200], when[32];
	va_list ap;
	size_t n;
	ssize_t w;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	n = strlen(msg);
	while (n && msg[n - 1] == '\n')
		msg[--n] = '\0';
	switch (sink) {
	case SINK_SYSLOG:
		syslog(prio, "%s", msg);
		return;
	case SINK_FILE:
		util_rfc3339(util_now_ns(), when);
		snprintf(line, sizeof(line), "%s packetfs[%d]: %s: %s\n", when, (int)getpid(),
			 level(prio), msg);
		w = write(log_fd, line, strlen(line));
		(void)w;
		return;
	case SINK_STDERR:
		fprintf(stderr, "packetfs: %s\n", msg);
		return;
	}
}
