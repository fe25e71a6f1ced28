/*
 * engine-harness.c - see engine-harness.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine-harness.h"
#include "engine.h"
#include "test.h"

void harness_engine_open(char *dir, struct engine **eng, struct pfs_caller *who)
{
	char store[512], repo[512], cmd[2048], err[512] = "";
	struct engine_options o = { 0 };

	memset(who, 0, sizeof(*who));
	who->uid = getuid();
	who->gid = getgid();
	ASSERT(mkdtemp(dir) != NULL);
	snprintf(store, sizeof(store), "%s/store", dir);
	snprintf(repo, sizeof(repo), "%s/repo", dir);
	snprintf(cmd, sizeof(cmd),
		 "git init -q -b main %s && git -C %s -c user.name=t -c user.email=t@t "
		 "commit -q --allow-empty -m base",
		 repo, repo);
	ASSERT_EQ(system(cmd), 0);
	if (engine_init_store(store, repo, NULL, err, sizeof(err)))
		FAIL_AT("engine_init_store: %s", err);
	o.store = store;
	if (engine_open(&o, eng, err, sizeof(err)))
		FAIL_AT("engine_open: %s", err);
	ASSERT_EQ(engine_mkdir(*eng, "/fix-1", 0755, who), 0);
}
