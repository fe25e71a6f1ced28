/*
 * fuzz-config.c - pipeline.json (config_parse, engine/format/config.c):
 * the text of .packetfs/pipeline.json, as an agent may write it through the
 * mount. A document is accepted whole or refused with -EINVAL and a
 * message; an accepted one is complete (config.h's invariants).
 */
#include <errno.h>

#include "config.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pfs_config *cfg = NULL;
	char err[512];
	size_t i;
	int rc;

	err[0] = 'x';
	rc = config_parse((const char *)data, size, &cfg, err, sizeof(err));
	CHECK(rc == 0 || rc == -EINVAL || rc == -ENOMEM);
	if (rc) {
		CHECK(cfg == NULL);
		CHECK(rc == -ENOMEM || (err[0] && memchr(err, '\0', sizeof(err))));
		return 0;
	}
	CHECK(cfg->repo && cfg->repo[0] == '/' && cfg->base && cfg->base[0]);
	CHECK(!cfg->recipes_dir || cfg->recipes_dir[0] == '/');
	CHECK(cfg->nstages >= 1 && cfg->max_parallel_recipes >= 1);
	CHECK(cfg->gpu_mode != GPU_LIST || cfg->gpu_ids);
	CHECK(cfg->executor.extra_args);
	for (i = 0; i < cfg->nstages; i++) {
		const struct pfs_stage *st = &cfg->stages[i];
		size_t index = cfg->nstages;

		CHECK(st->name && st->produces && st->env);
		CHECK(!st->run || st->run[0]);
		/* config_stage walks the stages: a few lookups keep the
		 * harness linear (tests/fuzz/scaling.sh times it). */
		if (i >= 16 && i + 1 < cfg->nstages)
			continue;
		CHECK(config_stage(cfg, st->name, &index) == st && index == i);
		CHECK(!st->on_needs_changes ||
		      (config_stage(cfg, st->on_needs_changes, &index) && index < i));
	}
	config_free(cfg);
	return 0;
}
