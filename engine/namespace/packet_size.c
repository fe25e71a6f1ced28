/*
 * packet_size.c - the size a stat gives a view rendered on demand: its
 * rendering's length, remembered under the view's stamp (view_size.c) for
 * the views that sweeps of the mount stat on every item.
 */
#include <errno.h>

#include "packet_int.h"

/* The view_size.c slot of views of kind k, or -1 for views not
 * remembered. */
static int size_slot(enum kind k)
{
	switch (k) {
	case N_STATUS:
		return VIEW_SIZE_STATUS;
	case N_STATUS_JSON:
		return VIEW_SIZE_STATUS_JSON;
	case N_EVIDENCE:
		return VIEW_SIZE_EVIDENCE;
	case N_JUNIT:
		return VIEW_SIZE_JUNIT;
	case N_REPORT:
		return VIEW_SIZE_REPORT;
	case N_SCOPE:
		return VIEW_SIZE_SCOPE;
	case N_MEASUREMENTS:
		return VIEW_SIZE_MEASUREMENTS;
	case N_DIFF:
		return VIEW_SIZE_DIFF;
	default:
		return -1;
	}
}

/* Renders n for its length; clocked as packet__render_clocked. A
 * change.diff or recipe that cannot be made has size 0. */
static int render_size(struct engine *e, struct node *n, uint64_t *size, int *clocked)
{
	struct buf b;
	int rc;

	buf_init(&b);
	rc = packet__render_clocked(e, n, &b, clocked);
	if (rc && (n->kind == N_DIFF || n->kind == N_RECIPE))
		rc = 0;
	*size = b.len;
	buf_free(&b);
	return rc;
}

/* index.html's size: remembered under view_stamp (view_size.c). */
static int index_size(struct engine *e, struct node *n, uint64_t *size)
{
	struct view_stamp st, after;
	int clocked = 0, rc;

	view_stamp(e, &st);
	if (view_index_size_get(e, &st, size))
		return 0;
	rc = render_size(e, n, size, &clocked);
	view_stamp(e, &after);
	if (rc == 0 && !clocked && view_stamp_equal(&st, &after))
		view_index_size_keep(e, &st, *size);
	return rc;
}

int packet__view_size(struct engine *e, struct node *n, uint64_t *size)
{
	struct view_stamp st, after;
	struct node m;
	int slot = size_slot(n->kind), clocked = 0, rc;

	if (n->kind == N_INDEX && !e->readonly)
		return index_size(e, n, size);
	if (slot < 0 || e->readonly || !n->has_item || view_unstampable(e, n->item.id))
		return render_size(e, n, size, &clocked);
	view_stamp(e, &st);
	if (view_size_get(e, n->item.id, slot, &st, size))
		return 0;
	/* The refs moved since the item's commits were looked up (or they
	 * cannot be watched): look them up. */
	view_stamp_exact(e, &n->item, &st);
	if (view_size_get(e, n->item.id, slot, &st, size))
		return 0;
	/* The row as the store holds it under st: n's was read before. */
	m = *n;
	if (store_item_get_id(e->store, n->item.id, &m.item) != 0)
		return render_size(e, n, size, &clocked);
	rc = render_size(e, &m, size, &clocked);
	view_stamp(e, &after);
	view_stamp_exact(e, &m.item, &after);
	if (rc == 0 && !clocked && view_stamp_equal(&st, &after) && !view_unstampable(e, m.item.id))
		view_size_keep(e, m.item.id, slot, &st, *size);
	item_clear(&m.item);
	return rc;
}
