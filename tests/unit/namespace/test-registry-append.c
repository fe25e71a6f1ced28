/*
 * test-registry-append.c - appends to validation/registry.jsonl through
 * the namespace (engine/namespace/packet_file.c) on an offline engine: a
 * line is stored only whole and valid, a fragment without its newline is
 * held up to REGISTRY_LINE_MAX bytes and no further (-EFBIG, nothing
 * stored, the fragment as it was), so that 16 MiB written 4 KiB at a time
 * without a newline are refused at once (they were held, and searched
 * whole for a newline at every write: 25 s).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine-harness.h"
#include "engine.h"
#include "registry.h"
#include "test.h"

#define REGISTRY "/fix-1/validation/registry.jsonl"

static char dir[] = "/tmp/pfs-registry-append-XXXXXX";
static struct engine *eng;
static struct pfs_caller who;

static const char good[] = "{\"recipe\": \"01-build\", \"status\": \"failing\"}";

static struct pfs_file *open_registry(void)
{
	struct pfs_file *f = NULL;

	ASSERT_EQ(engine_file_open(eng, REGISTRY, O_WRONLY | O_APPEND, 0, &who, &f), 0);
	return f;
}

static ssize_t put(struct pfs_file *f, const char *data, size_t len)
{
	return engine_file_write(f, data, len, 0, &who);
}

/* The registry's content (caller frees). */
static char *registry(void)
{
	struct pfs_file *f = NULL;
	struct buf b = { 0 };
	char chunk[65536];
	ssize_t n;

	ASSERT_EQ(engine_file_open(eng, REGISTRY, O_RDONLY, 0, &who, &f), 0);
	while ((n = engine_file_read(f, chunk, sizeof(chunk), b.len)) > 0)
		ASSERT_EQ(buf_append(&b, chunk, (size_t)n), 0);
	ASSERT_EQ(n, 0);
	engine_file_release(f);
	return buf_steal(&b);
}

static size_t lines(void)
{
	char *text = registry(), *p;
	size_t n = 0;

	for (p = text; (p = strchr(p, '\n')); p++)
		n++;
	free(text);
	return n;
}

/* A line comes whole across writes; only then is it stored, as external. */
TEST(whole_lines)
{
	struct pfs_file *f = open_registry();
	char *text;

	ASSERT_EQ(put(f, good, 10), 10);
	ASSERT_EQ(lines(), 0);
	ASSERT_EQ(put(f, good + 10, strlen(good) - 10), (ssize_t)strlen(good) - 10);
	ASSERT_EQ(put(f, "\n", 1), 1);
	ASSERT_EQ(lines(), 1);
	text = registry();
	ASSERT_CONTAINS(text, "\"source\":\"external\"");
	free(text);
	engine_file_release(f);
}

/* A fragment may grow to REGISTRY_LINE_MAX bytes and no further; the
 * writes past it are refused and cost only their own bytes. */
TEST(long_fragment)
{
	static char chunk[4096];
	struct pfs_file *f = open_registry();
	size_t done;

	memset(chunk, 'x', sizeof(chunk));
	for (done = 0; done < REGISTRY_LINE_MAX; done += sizeof(chunk))
		ASSERT_EQ(put(f, chunk, sizeof(chunk)), sizeof(chunk));
	for (; done < 16 << 20; done += sizeof(chunk))
		ASSERT_EQ(put(f, chunk, sizeof(chunk)), -EFBIG);
	/* The fragment held is what it was: its newline ends a bad line. */
	ASSERT_EQ(put(f, "\n", 1), -EINVAL);
	engine_file_release(f);
	ASSERT_EQ(lines(), 1);
}

/* A write is stored whole or not at all: a good line before a fragment
 * that is too long, or a complete line that is too long, stores nothing. */
TEST(all_or_none)
{
	struct pfs_file *f = open_registry();
	struct buf b = { 0 };

	ASSERT_EQ(buf_printf(&b, "%s\n", good), 0);
	while (b.len <= strlen(good) + 1 + REGISTRY_LINE_MAX)
		ASSERT_EQ(buf_puts(&b, "xxxxxxxx"), 0);
	ASSERT_EQ(put(f, b.data, b.len), -EFBIG);
	ASSERT_EQ(buf_puts(&b, "\n"), 0);
	ASSERT_EQ(put(f, b.data, b.len), -EFBIG);
	ASSERT_EQ(lines(), 1);
	/* The handle goes on: nothing of the refused writes is held. */
	ASSERT_EQ(put(f, good, strlen(good)), (ssize_t)strlen(good));
	ASSERT_EQ(put(f, "\n", 1), 1);
	ASSERT_EQ(lines(), 2);
	engine_file_release(f);
	buf_free(&b);
}

int main(void)
{
	harness_engine_open(dir, &eng, &who);
	RUN(whole_lines);
	RUN(long_fragment);
	RUN(all_or_none);
	engine_close(eng);
	return test_rmtree(dir);
}
