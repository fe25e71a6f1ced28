/*
 * plan_scope.h - plan.md's scope block compared with the change at a head
 * (SPEC §6 "Scope"): what validation/scope.md, status and the gates read.
 * Part of the pipeline layer, beside plan.h. Thread-safe (the store
 * serialises its own access; git is read through a repository of the
 * caller's call).
 */
#ifndef PACKETFS_PLAN_SCOPE_H
#define PACKETFS_PLAN_SCOPE_H

#include <stddef.h>
#include <stdint.h>

#include "format.h"
#include "store.h"

/*
 * Reads the scope block of item item_id's plan.md into *sc: as
 * scope_parse (1, 0 when there is no block or no plan.md, -EINVAL with
 * err, -ENOMEM), or the store's negative errno. Free *sc with scope_free
 * in every case.
 */
int plan_scope_read(struct store *s, int64_t item_id, struct scope *sc, char *err, size_t size);

/*
 * The item's scope at commit head (40 hex digits) of the repository at
 * repo, the change being merge-base(base, head)..head: 0 when plan.md has
 * no scope block (*res zero, nothing appended), 1 with *res set and, when
 * not NULL, validation/scope.md's text appended to md and the touched kept
 * paths ("a, b") to kept; -EINVAL with err when the block is malformed;
 * -ENOENT (with err) when the change cannot be read, -ENOMEM, or the
 * store's negative errno.
 */
int plan_scope(struct store *s, int64_t item_id, const char *repo, const char *base,
	       const char *head, struct buf *md, struct buf *kept, struct scope_result *res,
	       char *err, size_t size);

#endif
