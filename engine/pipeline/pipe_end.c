/*
 * pipe_end.c - a recipe run's start and end as the store keeps them (SPEC
 * §6), on the loop thread: each in one transaction where the store takes
 * it, so that a recipe costs the store two commits besides its run row
 * rather than nine.
 *
 * The start (pipe__recipe_started): once the process runs, its process
 * group (for crash recovery), the log's header and the recipe_started
 * event (store_run_start). The end (pipe__recipe_seal): the log's footer,
 * the sealed run row (status, exit, finish time, the log's size and
 * sha256), the registry line made from it, the item's updated time, the
 * recipe_finished event and the line that tells the stage's log of it
 * (store_run_end).
 *
 * A transaction the store refuses (a full disk) changes nothing, and then
 * each part is written on its own as before, with its own way back: a
 * lost footer counts as lost output, a run left unsealed and a registry
 * line left out are kept and written again (pipe_full.c), an event the
 * store does not take is not told. Evidence reads the same either way.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipe_int.h"

void pipe__recipe_started(struct pipe *p, struct job *j, const struct buf *head, int spawned)
{
	char extra[1024];
	struct buf ev;
	int rc = -ENOMEM;

	ASSERT_LOOP_THREAD(p->pl);
	snprintf(extra, sizeof(extra), ",\"recipe\":\"%s\",\"run\":%d,\"gpus\":%s,\"log\":\"%s\"",
		 j->recipe.name, j->run.run_no, j->run.gpus, j->run.log_path);
	buf_init(&ev);
	pipe__event_text(&ev, j->item, "recipe_started", extra);
	if (spawned && ev.data)
		rc = store_run_start(p->pl->store, &j->run, head->data, head->len, ev.data);
	if (rc == 0) {
		if (head->len)
			pipe__changed(p->pl, j->item, j->run.log_path, PIPELINE_MODIFIED);
		pipe__event_stored(p->pl, j->item_id, j->item, "recipe_started", extra, ev.data);
	} else {
		/* One by one, as the store takes them: the header first. */
		if (head->len)
			pipe__log_append(p, j, head->data, head->len);
		pipeline_event(p->pl, j->item_id, j->item, "recipe_started", extra);
		if (spawned)
			(void)store_run_update(p->pl->store, &j->run); /* its process group */
	}
	buf_free(&ev);
}

/* store_run_end's line: the registry line of the sealed run (rr points
 * into it). */
static char *seal_line(void *arg, const struct run *r)
{
	(void)r;
	return registry_engine_line(arg);
}

void pipe__recipe_seal(struct pipe *p, struct job *j, const char *footer, const char *told,
		       struct registry_run *rr)
{
	struct job *sj = j->batch ? j->batch->stage_job : NULL;
	struct store_log_piece logs[2] = {{j->run.id, footer, strlen(footer)},
					  {sj ? sj->run.id : 0, told, sj ? strlen(told) : 0}};
	char extra[1024], *line;
	struct item it;
	struct buf ev;
	int have_it, rc = -ENOMEM;

	ASSERT_LOOP_THREAD(p->pl);
	have_it = store_item_get_id(p->pl->store, j->item_id, &it) == 0;
	snprintf(extra, sizeof(extra), ",\"recipe\":\"%s\",\"run\":%d,\"status\":\"%s\",\"log\":\"%s\"",
		 j->recipe.name, j->run.run_no, rr->status, j->run.log_path);
	buf_init(&ev);
	if (have_it)
		pipe__event_text(&ev, it.name, "recipe_finished", extra);
	util_rfc3339(util_now_ns(), j->run.finished_at);
	j->run.duration_s = rr->duration_s;
	if (have_it && ev.data)
		rc = store_run_end(p->pl->store, &j->run, logs, 2, seal_line, rr, &it, ev.data);
	if (rc == 0) {
		pipe__changed(p->pl, j->item, j->run.log_path, PIPELINE_MODIFIED);
		if (logs[1].len)
			pipe__changed(p->pl, sj->item, sj->run.log_path, PIPELINE_MODIFIED);
		pipe__changed(p->pl, j->item, "validation/registry.jsonl", PIPELINE_MODIFIED);
		pipe__changed(p->pl, j->item, "validation/evidence.md", PIPELINE_MODIFIED);
		pipe__changed(p->pl, j->item, "validation/junit.xml", PIPELINE_MODIFIED);
		pipe__changed(p->pl, j->item, "validation/measurements.md", PIPELINE_MODIFIED);
		pipe__event_stored(p->pl, it.id, it.name, "recipe_finished", extra, ev.data);
		pipe__item_written(p, &it);
		goto out;
	}
	/* One by one, each with its own way back (see the top). */
	pipe__log_append(p, j, footer, strlen(footer));
	pipe__run_seal(p, &j->run, rr->duration_s);
	line = registry_engine_line(rr);
	if (line) {
		if (store_registry_append(p->pl->store, j->item_id, line, "engine", j->run.id) == 0) {
			pipe__changed(p->pl, j->item, "validation/registry.jsonl", PIPELINE_MODIFIED);
			pipe__changed(p->pl, j->item, "validation/evidence.md", PIPELINE_MODIFIED);
			pipe__changed(p->pl, j->item, "validation/junit.xml", PIPELINE_MODIFIED);
			pipe__changed(p->pl, j->item, "validation/measurements.md", PIPELINE_MODIFIED);
		} else {
			/* Appended once the store takes it (pipe_full.c). */
			pipe__unsealed_line(p, j->item_id, j->item, j->run.id, line);
		}
		free(line);
	}
	if (have_it) {
		pipe__event(p, &it, "recipe_finished", "%s", extra);
		pipe__item_write(p, &it); /* updated: the status view changed */
	}
	if (logs[1].len)
		pipe__log_append(p, sj, told, logs[1].len);
out:
	if (have_it)
		item_clear(&it);
	buf_free(&ev);
}
