/*
 * scope.h - the plan's scope (SPEC §6 "Scope"): the ```scope block of
 * plan.md, the matching of its keep patterns, and the comparison of the
 * block with the paths a change touched (validation/scope.md's text and
 * the one-line summary status shows).
 *
 * The block holds one entry a line: "edit PATH", "add PATH", "delete
 * PATH" (the files the change plans to touch) or "keep PATTERN" (a git
 * pathspec glob the change must not touch); blank lines and lines starting
 * with '#' are skipped. A PATH is relative to the repository root: not
 * empty, no leading '/', no "." or ".." component, no glob character.
 * Only the first ```scope block counts.
 *
 * Patterns follow git's :(glob) pathspec magic: '*' and '?' and [...]
 * match within one path component, "**" across components ("a/" + "**" matches
 * everything inside a, "**" + "/b" b in any directory, "a/" + "**" + "/b"
 * zero or more directories between); a pattern with no glob character
 * matches that path and everything under it, as a git pathspec does.
 *
 * Pure and thread-safe (no shared state): a struct scope is the caller's.
 */
#ifndef PACKETFS_SCOPE_H
#define PACKETFS_SCOPE_H

#include <stddef.h>

#include "util.h"

enum scope_verb { SCOPE_EDIT, SCOPE_ADD, SCOPE_DELETE, SCOPE_KEEP };

struct scope_entry {
	enum scope_verb verb;
	char *path; /* a path, or for SCOPE_KEEP a pattern */
	int line;   /* its line in plan.md, from 1 */
};

struct scope {
	struct scope_entry *v;
	size_t n;
};

/* What a change did to one path. A rename is two changes: its old path
 * deleted and its new path added, each with the other as other. */
struct scope_change {
	char did;          /* 'A' added, 'D' deleted, 'M' edited */
	const char *path;
	const char *other; /* a rename's other path, else NULL */
};

/* The comparison in numbers: paths changed outside the plan, changed paths
 * a keep pattern matches. */
struct scope_result {
	size_t outside, kept;
};

/*
 * Reads the first ```scope block of plan[len] into *sc: 1 when there is
 * one (possibly empty), 0 when there is none (*sc empty), -ENOMEM, or
 * -EINVAL with err[size] set to "plan.md: line N: REASON" for the first
 * malformed line (unknown word, missing path, a path that is absolute or
 * has a "." / ".." component or a glob character, an unclosed '[' in a
 * pattern, a path planned twice). Free *sc with scope_free in every case.
 */
int scope_parse(const char *plan, size_t len, struct scope *sc, char *err, size_t size);

void scope_free(struct scope *sc);

/* 1 when path (a repository-relative file path) matches pattern, else 0. */
int scope_match(const char *pattern, const char *path);

/*
 * Compares sc with the n changes ch (any order) of a change at commit head
 * (40 hex digits, or "" when unknown) into *res, and when md is not NULL
 * appends validation/scope.md's text to it: each planned path with what
 * the change did to it (edited, added, deleted, untouched), each path
 * changed outside the plan, each keep pattern with the changed paths it
 * matches. When kept is not NULL the touched kept paths are appended to it
 * ("a, b", each once, in the order of ch). 0 or -ENOMEM.
 */
int scope_check(const struct scope *sc, const struct scope_change *ch, size_t n,
		const char *head, struct buf *md, struct buf *kept, struct scope_result *res);

/* The summary of r into out[size]: "clean", "N outside the plan", "N kept
 * paths touched" (singular for 1), both joined by ", " when both hold. */
void scope_summary(const struct scope_result *r, char *out, size_t size);

#endif
