/*
 * plan.h - what an item's plan.md says to the pipeline (SPEC §5): the
 * recipes of its ```validation-recipes block. Read from the store's
 * current revision of the document; recipe.h parses the text. Part of the
 * pipeline layer; the namespace's views read it too. Thread-safe (the
 * store serialises its own access).
 */
#ifndef PACKETFS_PLAN_H
#define PACKETFS_PLAN_H

#include <stdint.h>

#include "store.h"

/*
 * The recipes named by plan.md of item item_id, as recipe_plan_names
 * gives them: 0 and a NULL-terminated list in *names (strv_free it), or
 * -ENOENT when there is no plan.md (or a directory of that name) or it has
 * no block, -ENOMEM, or the store's negative errno.
 */
int plan_names(struct store *s, int64_t item_id, char ***names);

#endif
