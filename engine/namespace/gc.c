/*
 * gc.c - `packetfs gc`: reclaiming space under the retention rules
 * (engine.h: engine_gc; what goes and what stays: store_gc.c).
 *
 * The engine adds the clock: the cutoff, days before now, in the form the
 * store writes its times.
 */
#include <errno.h>
#include <string.h>

#include "packet_int.h"

int engine_gc(struct engine *e, int days, struct engine_gc *out)
{
	struct store_gc g;
	char before[32];
	int rc;

	memset(out, 0, sizeof(*out));
	if (e->readonly)
		return -EROFS;
	if (days < 0)
		return -EINVAL;
	util_rfc3339(util_now_ns() - (int64_t)days * 86400 * 1000000000LL, before);
	rc = store_gc(e->store, before, &g);
	out->paths = g.paths;
	out->revisions = g.revisions;
	out->stored_bytes = g.bytes;
	return rc;
}
