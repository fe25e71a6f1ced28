/*
 * util.c - buffers, time stamps, SHA-256, string vectors and whole-file I/O.
 * See util.h. No shared state: every function is thread-safe.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "util.h"

void buf_init(struct buf *b)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
}

static int buf_reserve(struct buf *b, size_t extra)
{
	size_t need = b->len + extra + 1;
	size_t cap;
	char *p;

	BUF_ASSERT(b);
	assert(need > b->len); /* no overflow */
	if (need <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 256;
	while (cap < need)
		cap *= 2;
	p = realloc(b->data, cap);
	if (!p)
		return -ENOMEM;
	b->data = p;
	b->cap = cap;
	return 0;
}

int buf_append(struct buf *b, const void *data, size_t len)
{
	if (buf_reserve(b, len))
		return -ENOMEM;
	if (len)
		memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
	BUF_ASSERT(b);
	return 0;
}

int buf_puts(struct buf *b, const char *s)
{
	return buf_append(b, s, strlen(s));
}

int buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	if (buf_reserve(b, (size_t)n))
		return -ENOMEM;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	BUF_ASSERT(b);
	return 0;
}

char *buf_steal(struct buf *b)
{
	char *p = b->data;

	BUF_ASSERT(b);
	if (!p) {
		p = strdup("");
		if (!p)
			return NULL;
	}
	buf_init(b);
	return p;
}

int util_grow(void *arrayp, size_t *cap, size_t n, size_t size, size_t first)
{
	size_t want = *cap ? *cap * 2 : first;
	void *v;

	if (n < *cap)
		return 0;
	if (want < *cap || want > SIZE_MAX / size)
		return -ENOMEM;
	memcpy(&v, arrayp, sizeof(v));
	v = realloc(v, want * size);
	if (!v)
		return -ENOMEM;
	memcpy(arrayp, &v, sizeof(v));
	*cap = want;
	return 0;
}

void buf_free(struct buf *b)
{
	free(b->data);
	buf_init(b);
}

int util_cond_wait_ms(pthread_cond_t *cond, pthread_mutex_t *m, long ms)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += ms % 1000 * 1000000L;
	until.tv_sec += ms / 1000 + until.tv_nsec / 1000000000L;
	until.tv_nsec %= 1000000000L;
	return pthread_cond_timedwait(cond, m, &until) == ETIMEDOUT;
}

int64_t util_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void util_rfc3339(int64_t ns, char out[32])
{
	time_t t = (time_t)(ns / 1000000000);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void util_stamp_file(int64_t ns, char out[32])
{
	time_t t = (time_t)(ns / 1000000000);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, 32, "%Y-%m-%dT%H-%M-%SZ", &tm);
}

struct util_sha {
	EVP_MD_CTX *ctx;
};

struct util_sha *util_sha_new(void)
{
	struct util_sha *s = malloc(sizeof(*s));

	if (!s)
		return NULL;
	s->ctx = EVP_MD_CTX_new();
	if (!s->ctx || EVP_DigestInit_ex(s->ctx, EVP_sha256(), NULL) != 1) {
		EVP_MD_CTX_free(s->ctx);
		free(s);
		return NULL;
	}
	return s;
}

void util_sha_update(struct util_sha *s, const void *data, size_t len)
{
	EVP_DigestUpdate(s->ctx, data, len);
}

void util_sha_final(struct util_sha *s, char hex[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0, i;

	EVP_DigestFinal_ex(s->ctx, md, &n);
	for (i = 0; i < n && i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	hex[64] = '\0';
	EVP_MD_CTX_free(s->ctx);
	free(s);
}

void util_sha256_hex(const void *data, size_t len, char hex[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0, i;

	EVP_Digest(data, len, md, &n, EVP_sha256(), NULL);
	for (i = 0; i < n && i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	hex[64] = '\0';
}

void strv_free(char **v)
{
	char **p;

	if (!v)
		return;
	for (p = v; *p; p++)
		free(*p);
	free(v);
}

size_t strv_len(char *const *v)
{
	size_t n = 0;

	while (v && v[n])
		n++;
	return n;
}

int strv_push(char ***v, const char *s)
{
	size_t n = strv_len(*v);
	char **nv = realloc(*v, (n + 2) * sizeof(char *));
	char *c;

	if (!nv)
		return -ENOMEM;
	*v = nv;
	c = strdup(s);
	if (!c) {
		nv[n] = NULL;
		return -ENOMEM;
	}
	nv[n] = c;
	nv[n + 1] = NULL;
	return 0;
}

char **strv_dup(char *const *v)
{
	char **out;
	size_t i, n;

	if (!v)
		return NULL;
	n = strv_len(v);
	out = calloc(n + 1, sizeof(char *));
	if (!out)
		return NULL;
	for (i = 0; i < n; i++) {
		out[i] = strdup(v[i]);
		if (!out[i]) {
			strv_free(out);
			return NULL;
		}
	}
	return out;
}

static int needs_quote(const char *s)
{
	if (!*s)
		return 1;
	for (; *s; s++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./-_", *s))
			return 1;
	return 0;
}

char *strv_join(char *const *v, const char *sep, int quote)
{
	struct buf b;
	size_t i;
	int rc = 0;

	buf_init(&b);
	for (i = 0; v && v[i]; i++) {
		if (i)
			rc |= buf_puts(&b, sep);
		if (quote && needs_quote(v[i])) {
			const char *p;

			rc |= buf_puts(&b, "'");
			for (p = v[i]; *p; p++)
				rc |= *p == '\'' ? buf_puts(&b, "'\\''") : buf_append(&b, p, 1);
			rc |= buf_puts(&b, "'");
		} else {
			rc |= buf_puts(&b, v[i]);
		}
	}
	if (rc) {
		buf_free(&b);
		return NULL;
	}
	return buf_steal(&b);
}

int util_read_fd(int fd, size_t max, struct buf *out)
{
	char chunk[65536];

	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		if (out->len + (size_t)n > max)
			return -EFBIG;
		if (buf_append(out, chunk, (size_t)n))
			return -ENOMEM;
	}
}

int util_read_path(const char *path, size_t max, struct buf *out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc;

	if (fd < 0)
		return -errno;
	rc = util_read_fd(fd, max, out);
	close(fd);
	return rc;
}

int util_read_file(const char *path, size_t max, char **out, size_t *len)
{
	struct buf b;
	int rc;

	buf_init(&b);
	rc = buf_reserve(&b, 0) ? -ENOMEM : util_read_path(path, max, &b);
	if (rc) {
		buf_free(&b);
		return rc;
	}
	if (len)
		*len = b.len;
	*out = buf_steal(&b);
	return *out ? 0 : -ENOMEM;
}

ssize_t util_pread(int fd, void *data, size_t len, uint64_t off)
{
	ssize_t n;

	do
		n = pread(fd, data, len, (off_t)off);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

int util_write_all(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int util_write_file(const char *path, const void *data, size_t len)
{
	char tmp[4096];
	int fd, rc;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	rc = util_write_all(fd, data, len);
	if (!rc && fsync(fd))
		rc = -errno;
	if (close(fd) && !rc)
		rc = -errno;
	if (!rc && rename(tmp, path))
		rc = -errno;
	if (rc)
		unlink(tmp);
	return rc;
}

pid_t util_tgid(pid_t pid)
{
	char path[64], line[128];
	long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %ld", &v) == 1)
			break;
	fclose(f);
	return (pid_t)v;
}

int util_mkdirs(const char *path, int mode)
{
	char tmp[4096];
	size_t len = strlen(path);
	char *p;

	if (len == 0 || len >= sizeof(tmp))
		return -ENAMETOOLONG;
	memcpy(tmp, path, len + 1);
	for (p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, (mode_t)mode) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, (mode_t)mode) && errno != EEXIST)
		return -errno;
	return 0;
}

/* The first failure of util_remove_tree's walk (nftw passes no argument). */
static __thread int remove_err;

static int remove_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DNR || flag == FTW_NS) {
		if (!remove_err)
			remove_err = -EACCES;
	}
	if (remove(p) < 0 && errno != ENOENT && !remove_err)
		remove_err = -errno;
	return 0;
}

int util_remove_tree(const char *path)
{
	remove_err = 0;
	if (nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT) < 0 && errno != ENOENT &&
	    !remove_err)
		remove_err = -errno;
	return remove_err;
}

size_t util_utf8_char(const unsigned char *s, size_t n, uint32_t *cp)
{
	unsigned c = s[0];
	uint32_t v;
	size_t len, i;

	if (c < 0x80)
		len = 1, v = c;
	else if (c >= 0xc2 && c <= 0xdf)
		len = 2, v = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3, v = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4, v = c & 0x07;
	else
		return 0;
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		v = v << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && (v < 0x800 || (v >= 0xd800 && v <= 0xdfff))) ||
	    (len == 4 && (v < 0x10000 || v > 0x10ffff)))
		return 0;
	if (cp)
		*cp = v;
	return len;
}
