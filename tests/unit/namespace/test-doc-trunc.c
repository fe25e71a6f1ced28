/*
 * test-doc-trunc.c - an O_TRUNC open of a document through the namespace
 * (engine/namespace/packet_doc.c, "Truncation") on an offline engine: the
 * other handles read what the document held, whole, until the truncating
 * handle makes its next request (a write, read, flush, getattr or its
 * release) or the document changes otherwise, while its attributes are
 * the emptied document's at once. That keeps a page-cache read sent by
 * the kernel at the old size from coming back short, which the kernel can
 * turn into zeros below the old size.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine-harness.h"
#include "engine.h"
#include "test.h"

#define DOC "/fix-1/notes.md"

static char dir[] = "/tmp/pfs-doc-trunc-XXXXXX";
static struct engine *eng;
static struct pfs_caller who;

static const char old[] = "notes v1: the version before the truncation\n";

static struct pfs_file *open_doc(int flags)
{
	struct pfs_file *f = NULL;

	ASSERT_EQ(engine_file_open(eng, DOC, flags, 0644, &who, &f), 0);
	return f;
}

static void put(struct pfs_file *f, const char *s, uint64_t off)
{
	ASSERT_EQ(engine_file_write(f, s, strlen(s), off, &who), (ssize_t)strlen(s));
}

/* The document as handle f reads it, NUL-terminated into out. */
static const char *read_as(struct pfs_file *f, char *out, size_t size)
{
	ssize_t n = engine_file_read(f, out, size - 1, 0);

	ASSERT(n >= 0);
	out[n] = '\0';
	return out;
}

static uint64_t size_as(struct pfs_file *f)
{
	struct pfs_stat st;

	ASSERT_EQ(engine_file_getattr(f, &st), 0);
	return st.size;
}

/* The stored document, read by a handle of its own. */
static const char *stored(char *out, size_t size)
{
	struct pfs_file *f = open_doc(O_RDONLY);

	read_as(f, out, size);
	engine_file_release(f);
	return out;
}

/* Releases the handles given (NULL-terminated), then checks that the
 * stored document is want. */
static void release_all(const char *want, ...)
{
	struct pfs_file *f;
	char b[256];
	va_list ap;

	va_start(ap, want);
	while ((f = va_arg(ap, struct pfs_file *)) != NULL)
		engine_file_release(f);
	va_end(ap);
	ASSERT_STREQ(stored(b, sizeof(b)), want);
}

/* Makes the document hold s, committed, with no handle open. */
static void reset(const char *s)
{
	struct pfs_file *f = open_doc(O_WRONLY | O_CREAT | O_TRUNC);

	put(f, s, 0);
	engine_file_release(f);
}

/* A reader open before the truncation, and one opened after it, read the
 * old bytes whole until the truncating handle writes; the truncating
 * handle's attributes, and the others', are the emptied document's. */
TEST(others_read_before)
{
	struct pfs_file *r1, *w, *r2;
	char b[256];

	reset(old);
	r1 = open_doc(O_RDONLY);
	ASSERT_STREQ(read_as(r1, b, sizeof(b)), old);
	w = open_doc(O_WRONLY | O_TRUNC);
	ASSERT_STREQ(read_as(r1, b, sizeof(b)), old);
	r2 = open_doc(O_RDONLY);
	ASSERT_STREQ(read_as(r2, b, sizeof(b)), old);
	ASSERT_EQ(size_as(r1), 0);
	ASSERT_STREQ(read_as(r2, b, sizeof(b)), old); /* a getattr of another: no end */
	put(w, "notes v2\n", 0);
	ASSERT_STREQ(read_as(r1, b, sizeof(b)), "notes v2\n");
	ASSERT_STREQ(read_as(r2, b, sizeof(b)), "notes v2\n");
	release_all("notes v2\n", w, r1, r2, NULL);
}

/* Any request of the truncating handle ends it: a flush (a shell closes
 * the first descriptor after its dup2), a getattr, a read of its own
 * (which sees the emptied document), its release. */
TEST(owner_requests)
{
	struct pfs_file *r, *w;
	char b[256];
	int i;

	for (i = 0; i < 4; i++) {
		reset(old);
		r = open_doc(O_RDONLY);
		w = open_doc(i == 2 ? O_RDWR | O_TRUNC : O_WRONLY | O_TRUNC);
		ASSERT_STREQ(read_as(r, b, sizeof(b)), old);
		switch (i) {
		case 0:
			ASSERT_EQ(engine_file_flush(w, &who), 0);
			break;
		case 1:
			ASSERT_EQ(size_as(w), 0);
			break;
		case 2:
			ASSERT_STREQ(read_as(w, b, sizeof(b)), "");
			break;
		default:
			engine_file_release(w);
			w = NULL;
			break;
		}
		ASSERT_STREQ(read_as(r, b, sizeof(b)), "");
		if (w)
			engine_file_release(w);
		release_all("", r, NULL);
	}
}

/* A write through another handle changes the document: from then on
 * everyone reads it as it is. */
TEST(other_writer)
{
	struct pfs_file *r, *w, *x;
	char b[256];

	reset(old);
	r = open_doc(O_RDONLY);
	w = open_doc(O_WRONLY | O_TRUNC);
	x = open_doc(O_WRONLY);
	ASSERT_STREQ(read_as(r, b, sizeof(b)), old);
	put(x, "zz", 0);
	ASSERT_STREQ(read_as(r, b, sizeof(b)), "zz");
	release_all("zz", x, w, r, NULL);
}

/* A document held only by an appender holds only its new bytes (partial):
 * what the truncation kept is read whole, the stored revision before
 * them. */
TEST(partial)
{
	struct pfs_file *a, *w, *r;
	char b[256], want[256];

	reset(old);
	a = open_doc(O_WRONLY | O_APPEND);
	put(a, "appended\n", 0);
	w = open_doc(O_WRONLY | O_TRUNC);
	r = open_doc(O_RDONLY);
	snprintf(want, sizeof(want), "%sappended\n", old);
	ASSERT_STREQ(read_as(r, b, sizeof(b)), want);
	put(w, "v3\n", 0);
	ASSERT_STREQ(read_as(r, b, sizeof(b)), "v3\n");
	release_all("v3\n", w, a, r, NULL);
}

/* An empty document has nothing to keep; an O_TRUNC open of a document
 * nobody else has open leaves nothing behind at its release. */
TEST(empty)
{
	struct pfs_file *r, *w;
	char b[256];

	reset("");
	r = open_doc(O_RDONLY);
	w = open_doc(O_WRONLY | O_TRUNC);
	ASSERT_STREQ(read_as(r, b, sizeof(b)), "");
	put(w, "v4\n", 0);
	ASSERT_STREQ(read_as(r, b, sizeof(b)), "v4\n");
	release_all("v4\n", w, r, NULL);
	w = open_doc(O_WRONLY | O_TRUNC);
	release_all("", w, NULL);
}

int main(void)
{
	harness_engine_open(dir, &eng, &who);
	RUN(others_read_before);
	RUN(owner_requests);
	RUN(other_writer);
	RUN(partial);
	RUN(empty);
	engine_close(eng);
	return test_rmtree(dir);
}
