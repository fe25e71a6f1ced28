/*
 * recipe.h - the recipe catalog (SPEC §6), the plan's recipe list and
 * disposition (SPEC §5), and the markers of the stage documents that the
 * gates read, all of it Markdown read with CommonMark's fenced code blocks.
 *
 * A recipe is a file "NN-name" or "NN-name.ext" in the recipes directory;
 * its name is the file name without extension. A script recipe is an
 * executable regular file; a procedure is a regular file "NN-name.md",
 * executable or not: header lines, then prose saying what the recipe must
 * prove, and no command of its own (it runs only through the recorder).
 * Header lines within the first 30 lines of either: "# summary: text",
 * "# gpus: N", "# timeout: SECONDS", "# needs: NAME...", "# requires:
 * PROBE...", the measure lines of measure.h ("# measure: base", "# repeat:
 * N", "# warmup: K", "# budget: METRIC +P%") and any number of "# version: COMMAND"; in a procedure they may also stand inside an HTML
 * comment ("<!--" ... "-->"). Other files, and files whose name is not
 * NN-name, are skipped.
 *
 * The catalog keeps a stamp of what it was read from, so that a caller can
 * tell cheaply whether the directory still holds the same files
 * (recipe_catalog_fresh) and load it again when not.
 *
 * Thread-safe (no shared state): a catalog or recipe is the caller's, and
 * must not be freed while another thread reads it.
 */
#ifndef PACKETFS_RECIPE_H
#define PACKETFS_RECIPE_H

#include <stddef.h>

#include "measure.h"

struct recipe {
	char *name;        /* "03-unit-tests" */
	char *file;        /* "03-unit-tests.sh" */
	char *path;        /* absolute path */
	char *summary;     /* "" when absent */
	int gpus;          /* default 0 */
	int timeout_s;     /* 0 = none */
	int procedure;     /* 1 for a procedure "NN-name.md": header lines then prose, no
			    * command; it is run only through the recorder (packetfs record) */
	int needs_default; /* 1 when there is no "# needs:" line: the recipe needs every
			    * lower-numbered recipe of its batch */
	char **needs;      /* NULL-terminated recipe names of "# needs: A B" (words separated by
			    * blanks or commas); an empty list (non-NULL, first element NULL) for
			    * "# needs: none"; NULL when needs_default */
	char **versions;   /* the "# version: COMMAND" lines' commands, in order, NULL-terminated,
			    * never NULL (empty list when none) */
	char **requires;   /* the probes of every "# requires: A B" line (words separated by
			    * blanks or commas), in order, repeats dropped, NULL-terminated,
			    * never NULL (empty list when none). A word is kept as written,
			    * whatever it holds (cut to 64 bytes): a name that is no probe of
			    * the configuration blocks the run saying so. */
	struct recipe_measure measure; /* the measure lines (measure.h); measured 0 when
					* absent; a bad line's reason in measure.error */
};

/* What a catalog was read from (recipe.c). */
struct recipe_stamp;

struct recipe_catalog {
	struct recipe *v;            /* sorted by name */
	size_t n;
	struct recipe_stamp *stamp;  /* for recipe_catalog_fresh; NULL: not loaded */
};

/*
 * Loads dir into *out (its old content is not freed). NULL or a missing dir
 * gives an empty catalog and 0. Returns 0, -ENOMEM, or -errno of opendir
 * for errors other than ENOENT; on error *out is an empty catalog that is
 * never fresh. Caller frees with recipe_catalog_free. Blocks (reads the
 * directory and the first HEAD_MAX bytes of each recipe). Any thread.
 */
int recipe_catalog_load(const char *dir, struct recipe_catalog *out);
/* Frees cat's recipes and stamp and empties it; NULL allowed. */
void recipe_catalog_free(struct recipe_catalog *cat);
/* The recipe named name, or NULL. The pointer lives as long as cat. */
const struct recipe *recipe_find(const struct recipe_catalog *cat, const char *name);

/*
 * Whether cat still describes dir as it is on disk now: 1 when nothing was
 * added, removed, renamed or rewritten since it was loaded, 0 otherwise.
 * It compares the stamp taken at load: dir as given and the directory's
 * device, inode, mtime and ctime, and of each file whose name is a recipe
 * file name (also those skipped, so that a chmod +x counts) the device,
 * inode, size, mode, mtime and ctime, or the error of its stat. A catalog
 * loaded while any of these times was less than two seconds old is never
 * fresh (a rewrite within the file system's timestamp granularity could
 * leave every one of them unchanged), nor is one that was never loaded or
 * whose load failed. Cheap: one stat of dir plus one per file; reads no
 * file. Any thread.
 */
int recipe_catalog_fresh(const char *dir, const struct recipe_catalog *cat);

/* Deep copy of src into dst (dst's old content is not freed); NULL strings
 * and a NULL needs stay NULL, a NULL versions becomes an empty list. 0 or
 * -ENOMEM (dst then cleared). Caller frees with recipe_clear. */
int recipe_copy(struct recipe *dst, const struct recipe *src);
/* Frees the strings and lists of r and zeroes it; NULL fields allowed. */
void recipe_clear(struct recipe *r);

/*
 * Parses the first ```validation-recipes fenced block of a plan.md text:
 * one recipe name per line, blank lines and lines starting with '#'
 * ignored, surrounding spaces and a leading "- " stripped. A NUL byte in a
 * line stands as the two characters "\0" in its name, which no recipe name
 * can hold: such a name is shown whole and never matches a recipe. On success
 * returns 0 and a NULL-terminated, de-duplicated list in *names (caller
 * frees with strv_free; may be empty). Returns -ENOENT when the plan has no
 * such block, -ENOMEM on allocation failure.
 */
int recipe_plan_names(const char *plan, size_t len, char ***names);

/* The longest disposition word, with its NUL. */
#define DISPOSITION_MAX 64

/*
 * Finds the disposition of a plan.md text (SPEC §5): a line
 * "Disposition: WORD" outside fenced blocks, where WORD is lower-case
 * letters, digits, '.', '_' and '-' (e.g. already-resolved, duplicate,
 * not-reproducible), at most size - 1 bytes. Returns 1 with WORD in out, 0
 * when the plan has no such line, or -EINVAL with the reason in out when a
 * "Disposition:" line holds something else. Thread-safe.
 */
int recipe_plan_disposition(const char *plan, size_t len, char *out, size_t size);

/* The longest value of a plan header line, with its NUL. */
#define PLAN_HEADER_MAX 256

/* The header lines of a plan.md that choose the item's path (SPEC §5
 * "Routes and templates"): the value of each, "" when absent. */
struct plan_header {
	char route[PLAN_HEADER_MAX];          /* "Route: R" */
	char template[PLAN_HEADER_MAX];       /* "Template: NAME" */
	char engine[PLAN_HEADER_MAX];         /* "Engine: E" */
	char review_request[PLAN_HEADER_MAX]; /* "Review request: NUMBER|URL" */
};

/*
 * Reads the header lines of a plan.md text (len bytes): for each key, the
 * first line outside fenced blocks that starts with it ("Route:",
 * "Template:", "Engine:", "Review request:"; case-sensitive, as
 * "Disposition:"), its value without the blanks around it. Returns 0 with
 * out filled, or -EINVAL with "plan.md: ..." in err when such a line has
 * no value, a control character, or a value of PLAN_HEADER_MAX bytes or
 * more. Thread-safe.
 */
int recipe_plan_header(const char *plan, size_t len, struct plan_header *out, char *err,
		       size_t errlen);

/*
 * What a stage's document says in its heading "## KEY: value" (SPEC §5:
 * "## Verdict: pass" in change-validation.md, "## Assessment: sound" in
 * review.md): the first word of the value of the last such line of text
 * (len bytes; need not be NUL-terminated) that stands outside fenced code
 * blocks, indented at most three spaces (a Markdown heading), KEY matched
 * without regard to case. '*' and '`' around the word are dropped; the
 * word ends at a blank, '*' or '`'. Into out (size >= 1 bytes): the word
 * cut to size - 1 bytes, a NUL byte in it as '?', or "" when there is no
 * such line. key holds no NUL byte. Thread-safe.
 */
void recipe_doc_marker(const char *text, size_t len, const char *key, char *out, size_t size);

#endif
