/*
 * pipeline.c - the pipeline layer's handle (pipeline.h): opening it over a
 * store, the loop thread and its command queue, the events it records,
 * the hooks that tell the layers above, and the table of what runs now.
 *
 * DESIGN: pipeline state lives on one libuv loop thread (pipe.c): a thread
 * that needs it (a ctl command, a recorded run) queues a struct pipe_cmd
 * and waits on its condition variable; uv_async_send wakes the loop, whose
 * callback drains the whole queue (sends coalesce). The loop thread never
 * waits on another thread, so no cycle can form.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "pipe_int.h"

int pipeline_open(const struct pipeline_options *opt, struct pipeline **out, char *err,
		  size_t errlen)
{
	struct pipeline *pl;
	char *json = NULL;
	int rc;

	pl = calloc(1, sizeof(*pl));
	if (!pl)
		return -ENOMEM;
	pthread_mutex_init(&pl->cfg_lock, NULL);
	pthread_mutex_init(&pl->active_lock, NULL);
	pthread_mutex_init(&pl->unstored_lock, NULL);
	pthread_mutex_init(&pl->q_lock, NULL);
	pthread_mutex_init(&pl->notify_lock, NULL);
	pthread_mutex_init(&pl->cenv_lock, NULL);
	pl->notify_tail = &pl->notify_head;
	pl->store = opt->store;
	pl->store_dir = opt->store_dir;
	pl->mountpoint = opt->mountpoint;
	pl->readonly = opt->readonly;
	pl->hooks = opt->hooks;
	rc = store_meta_get(pl->store, "pipeline", &json);
	if (rc) {
		snprintf(err, errlen, "%s: store has no pipeline configuration", pl->store_dir);
		goto fail;
	}
	rc = config_parse(json, strlen(json), &pl->cfg, err, errlen);
	if (rc)
		goto fail;
	pl->cfg_json = json;
	recipe_catalog_load(pl->cfg->recipes_dir, &pl->recipes);
	*out = pl;
	return 0;
fail:
	free(json);
	pipeline_close(pl);
	return rc;
}

int pipeline_recover(struct pipeline *pl)
{
	return pl->readonly ? -EROFS : pipe_recover(pl);
}

static void on_wake(uv_async_t *h)
{
	struct pipeline *pl = h->data;
	struct pipe_cmd *cmd;
	int stopping;

	ASSERT_LOOP_THREAD(pl);
	for (;;) {
		pthread_mutex_lock(&pl->q_lock);
		cmd = pl->q_head;
		if (cmd) {
			pl->q_head = cmd->next;
			if (!pl->q_head)
				pl->q_tail = NULL;
		}
		stopping = pl->stopping;
		pthread_mutex_unlock(&pl->q_lock);
		if (!cmd)
			break;
		if (stopping)
			cmd->result = -ESHUTDOWN;
		else if (strcmp(cmd->verb, "item-made") == 0)
			cmd->result = pipe__heads_made(pl->pipe, cmd->run_id, cmd->arg);
		else if (strncmp(cmd->verb, "record", 6) == 0)
			cmd->result = pipe_record_command(pl->pipe, cmd);
		else
			cmd->result = pipe_command(pl->pipe, cmd);
		pthread_mutex_lock(&pl->q_lock);
		cmd->done = 1;
		pthread_cond_broadcast(&cmd->cond);
		pthread_mutex_unlock(&pl->q_lock);
	}
	if (!stopping) {
		pipe__notify_pump(pl);
		pipe__cenv_wake(pl);
	}
	if (stopping) {
		pipe__cenv_stop(pl);
		pipe__notify_stop(pl);
		pipe__heads_stop(pl->pipe);
		pipe_shutdown(pl->pipe);
		uv_close((uv_handle_t *)&pl->wake, NULL);
	}
}

static void *loop_main(void *arg)
{
	struct pipeline *pl = arg;

	util_owner_enter(&pl->loop_owner);
	pipe_reattach(pl->pipe);
	pipe_resume(pl->pipe);
	pipe__heads_start(pl->pipe);
	pipe__notify_pump(pl); /* notices of events recorded before the loop ran */
	pipeline_cenv_refresh(pl); /* compute-env.md at mount */
	pipe__cenv_wake(pl);
	uv_run(&pl->loop, UV_RUN_DEFAULT);
	util_owner_leave(&pl->loop_owner);
	return NULL;
}

int pipeline_start(struct pipeline *pl)
{
	int rc;

	if (pl->readonly || pl->started)
		return -EINVAL;
	/* Orphans of stage and recipe processes come to us, not to init, so
	 * that cancel and the end of a run reach them (see runner.h). Without
	 * it runs still work; a descendant that escaped can survive its run. */
	runner_set_subreaper();
	rc = uv_loop_init(&pl->loop);
	if (rc)
		return rc;
	rc = uv_async_init(&pl->loop, &pl->wake, on_wake);
	if (rc)
		goto fail_loop;
	pl->wake.data = pl;
	rc = pipe_new(pl, &pl->pipe);
	if (rc)
		goto fail_async;
	/* Before the thread: it reads started (pipeline_cenv_refresh). */
	pl->started = 1;
	rc = -pthread_create(&pl->thread, NULL, loop_main, pl);
	if (rc)
		goto fail_pipe;
	return 0;
fail_pipe:
	pl->started = 0;
	pipe_free(pl->pipe);
	pl->pipe = NULL;
fail_async:
	uv_close((uv_handle_t *)&pl->wake, NULL);
	uv_run(&pl->loop, UV_RUN_DEFAULT);
fail_loop:
	uv_loop_close(&pl->loop);
	return rc;
}

int pipeline_call(struct pipeline *pl, struct pipe_cmd *cmd)
{
	ASSERT_NOT_LOOP_THREAD(pl); /* it would wait for itself */
	if (!pl->started)
		return -ENOTCONN;
	pthread_cond_init(&cmd->cond, NULL);
	cmd->done = 0;
	cmd->next = NULL;
	cmd->msg[0] = '\0';
	pthread_mutex_lock(&pl->q_lock);
	if (pl->stopping) {
		pthread_mutex_unlock(&pl->q_lock);
		pthread_cond_destroy(&cmd->cond);
		return -ESHUTDOWN;
	}
	if (pl->q_tail)
		pl->q_tail->next = cmd;
	else
		pl->q_head = cmd;
	pl->q_tail = cmd;
	uv_async_send(&pl->wake);
	while (!cmd->done)
		pthread_cond_wait(&cmd->cond, &pl->q_lock);
	pthread_mutex_unlock(&pl->q_lock);
	pthread_cond_destroy(&cmd->cond);
	return cmd->result;
}

void pipeline_close(struct pipeline *pl)
{
	if (!pl)
		return;
	if (pl->started) {
		pthread_mutex_lock(&pl->q_lock);
		pl->stopping = 1;
		uv_async_send(&pl->wake);
		pthread_mutex_unlock(&pl->q_lock);
		pthread_join(pl->thread, NULL);
		pipe_free(pl->pipe);
		uv_loop_close(&pl->loop);
	}
	recipe_catalog_free(&pl->recipes);
	config_free(pl->cfg);
	while (pl->nold_cfgs > 0)
		config_free(pl->old_cfgs[--pl->nold_cfgs]);
	free(pl->old_cfgs);
	free(pl->cfg_json);
	pthread_mutex_destroy(&pl->cfg_lock);
	pthread_mutex_destroy(&pl->active_lock);
	pthread_mutex_destroy(&pl->unstored_lock);
	pipe__notify_free(pl);
	pthread_mutex_destroy(&pl->q_lock);
	pthread_mutex_destroy(&pl->notify_lock);
	cenv_clear(&pl->cenv_cur);
	cenv_clear(&pl->cenv_last);
	pthread_mutex_destroy(&pl->cenv_lock);
	free(pl);
}

/* ---- recorded runs ---- */

/* Sends a recorder command (verb "record" or "record-cancel") for item to
 * the loop thread; 0 or a negative errno with the reason in why. */
static int record_call(struct pipeline *pl, struct pipe_cmd *cmd, const char *item,
		       const char *verb, char *why, size_t whysize)
{
	int rc;

	snprintf(cmd->item, sizeof(cmd->item), "%s", item);
	snprintf(cmd->verb, sizeof(cmd->verb), "%s", verb);
	rc = pipeline_call(pl, cmd);
	if (rc == -ENOTCONN || rc == -ESHUTDOWN)
		snprintf(cmd->msg, sizeof(cmd->msg), "the pipeline is not running");
	snprintf(why, whysize, "%s", rc ? cmd->msg : "");
	return rc == -ESHUTDOWN ? -ENOTCONN : rc;
}

int pipeline_record(struct pipeline *pl, const char *item, const struct record_req *req,
		    int64_t *run_id, int *run_no, char *log, size_t logsize, char *why,
		    size_t whysize)
{
	struct pipe_cmd cmd;
	int rc;

	memset(&cmd, 0, sizeof(cmd));
	cmd.payload = req;
	rc = record_call(pl, &cmd, item, "record", why, whysize);
	if (rc)
		return rc;
	*run_id = cmd.run_id;
	*run_no = cmd.run_no;
	snprintf(log, logsize, "%s", cmd.log);
	return 0;
}

int pipeline_record_cancel(struct pipeline *pl, const char *item, int64_t run_id, char *why,
			   size_t whysize)
{
	struct pipe_cmd cmd;

	memset(&cmd, 0, sizeof(cmd));
	cmd.run_id = run_id;
	return record_call(pl, &cmd, item, "record-cancel", why, whysize);
}

void pipeline_item_made(struct pipeline *pl, int64_t item_id, const char *head)
{
	struct pipe_cmd cmd;

	memset(&cmd, 0, sizeof(cmd));
	snprintf(cmd.verb, sizeof(cmd.verb), "item-made");
	snprintf(cmd.arg, sizeof(cmd.arg), "%s", head);
	cmd.run_id = item_id;
	pipeline_call(pl, &cmd);
}

/* ---- events and the hooks ---- */

/* The hooks run the namespace, whose locks come before the pipeline's:
 * none of these may be held when one is called (pipeline.h; cfg_lock may
 * be, around changed alone). */
#define ASSERT_NO_PIPELINE_LOCK_BUT_CFG(pl)                 \
	do {                                                \
		assert(!util_mutex_held(&(pl)->active_lock));   \
		assert(!util_mutex_held(&(pl)->unstored_lock)); \
		assert(!util_mutex_held(&(pl)->q_lock));        \
		assert(!util_mutex_held(&(pl)->notify_lock));   \
	} while (0)

void pipe__changed(struct pipeline *pl, const char *item, const char *rel,
		   enum pipeline_change what)
{
	ASSERT_NO_PIPELINE_LOCK_BUT_CFG(pl);
	if (pl->hooks.changed)
		pl->hooks.changed(pl->hooks.arg, item, rel, what);
}

void pipe__doc_written(struct pipeline *pl, int64_t item_id, const char *item, const char *rel,
		       int created)
{
	ASSERT_NO_PIPELINE_LOCK_BUT_CFG(pl);
	assert(!util_mutex_held(&pl->cfg_lock));
	if (pl->hooks.doc_written)
		pl->hooks.doc_written(pl->hooks.arg, item_id, rel);
	pipe__changed(pl, item, rel, created ? PIPELINE_CREATED : PIPELINE_MODIFIED);
}

void pipe__event_text(struct buf *b, const char *item, const char *type, const char *extra_json)
{
	char ts[32];
	char *q = NULL;
	cJSON *s;

	util_rfc3339(util_now_ns(), ts);
	buf_printf(b, "{\"ts\":\"%s\"", ts);
	if (item) {
		s = cJSON_CreateString(item);
		q = s ? cJSON_PrintUnformatted(s) : NULL;
		cJSON_Delete(s);
		buf_printf(b, ",\"item\":%s", q ? q : "\"\"");
		free(q);
	}
	buf_printf(b, ",\"type\":\"%s\"%s}", type, extra_json ? extra_json : "");
}

void pipe__event_added(struct pipeline *pl, const char *item, const char *type)
{
	pipe__changed(pl, NULL, "events", PIPELINE_MODIFIED);
	if (item) {
		/* Events mark changes of the item's state: its status too. */
		pipe__changed(pl, item, "events", PIPELINE_MODIFIED);
		pipe__changed(pl, item, "status", PIPELINE_MODIFIED);
		pipe__changed(pl, item, "status.json", PIPELINE_MODIFIED);
		/* A run queued, started or ended: the answer of a request for it
		 * (the recorder's file) moved on. */
		if (strncmp(type, "recipe_", 7) == 0 || strncmp(type, "record_", 7) == 0)
			pipe__changed(pl, item, "validation/record", PIPELINE_MODIFIED);
	}
}

/* The daemon's log line of an event: every stage and recipe end, recipe
 * start and push (a stage's start: pipe__job_begin, pipe_job.c), and
 * configuration changes. */
static void event_logged(const char *item, const char *type, const char *extra_json)
{
	if (strncmp(type, "stage_", 6) == 0 || strncmp(type, "recipe_", 7) == 0 ||
	    strncmp(type, "push", 4) == 0 || strncmp(type, "config_", 7) == 0)
		util_log(LOG_INFO, "%s: %s {%s}", item ? item : "-", type,
			 extra_json ? extra_json + (extra_json[0] == ',') : "");
}

void pipeline_event(struct pipeline *pl, int64_t item_id, const char *item, const char *type,
		    const char *extra_json)
{
	struct buf b;

	if (pl->readonly)
		return;
	event_logged(item, type, extra_json);
	buf_init(&b);
	pipe__event_text(&b, item, type, extra_json);
	if (b.data && store_event_add(pl->store, item_id, b.data) == 0) {
		pipe__event_added(pl, item, type);
		pipe__notify(pl, item_id, b.data);
	}
	buf_free(&b);
}

void pipe__event_stored(struct pipeline *pl, int64_t item_id, const char *item, const char *type,
			const char *extra_json, const char *line)
{
	event_logged(item, type, extra_json);
	pipe__event_added(pl, item, type);
	pipe__notify(pl, item_id, line);
}

int pipeline_registry_external(struct pipeline *pl, int64_t item_id, const char *item,
			       const char *line)
{
	struct buf b;
	int rc;

	buf_init(&b);
	pipe__event_text(&b, item, "registry_external", "");
	rc = b.data ? store_registry_append_event(pl->store, item_id, line, b.data) : -ENOMEM;
	if (rc == 0) {
		pipe__event_added(pl, item, "registry_external");
		pipe__notify(pl, item_id, b.data);
	}
	buf_free(&b);
	return rc;
}

/* ---- what runs now ---- */

void pipe__active_add(struct pipeline *pl, const struct active_run *r)
{
	ASSERT_LOOP_THREAD(pl);
	pthread_mutex_lock(&pl->active_lock);
	if (pl->nactive < ACTIVE_MAX)
		pl->active[pl->nactive++] = *r;
	pthread_mutex_unlock(&pl->active_lock);
}

void pipe__active_set_leader(struct pipeline *pl, int64_t run_id, pid_t pid,
			     unsigned long long start_ticks)
{
	int i;

	pthread_mutex_lock(&pl->active_lock);
	for (i = 0; i < pl->nactive; i++) {
		if (pl->active[i].run_id == run_id) {
			pl->active[i].pid = pid;
			pl->active[i].start_ticks = start_ticks;
			break;
		}
	}
	pthread_mutex_unlock(&pl->active_lock);
}

void pipe__active_remove(struct pipeline *pl, int64_t run_id)
{
	int i;

	ASSERT_LOOP_THREAD(pl);
	pthread_mutex_lock(&pl->active_lock);
	assert(pl->nactive >= 0 && pl->nactive <= ACTIVE_MAX);
	for (i = 0; i < pl->nactive; i++) {
		if (pl->active[i].run_id == run_id) {
			pl->active[i] = pl->active[--pl->nactive];
			break;
		}
	}
	pthread_mutex_unlock(&pl->active_lock);
}

void pipeline_active_gpus(struct pipeline *pl, int64_t item_id, char *out, size_t size)
{
	size_t len = 0;
	int i, j;

	out[0] = '\0';
	pthread_mutex_lock(&pl->active_lock);
	for (i = 0; i < pl->nactive; i++) {
		if (pl->active[i].item_id != item_id)
			continue;
		for (j = 0; j < pl->active[i].ngpus && len + 8 < size; j++)
			len += (size_t)snprintf(out + len, size - len, "%s%d", len ? "," : "",
						pl->active[i].gpus[j]);
	}
	pthread_mutex_unlock(&pl->active_lock);
}

void pipeline_active_running(struct pipeline *pl, int64_t item_id, char *out, size_t size)
{
	int64_t now = util_now_ns();
	size_t len = 0;
	int i;

	out[0] = '\0';
	pthread_mutex_lock(&pl->active_lock);
	for (i = 0; i < pl->nactive && len + 80 < size; i++) {
		if (pl->active[i].item_id != item_id)
			continue;
		len += (size_t)snprintf(out + len, size - len, "%s%s (%lld s)", len ? ", " : "",
					pl->active[i].name,
					(long long)((now - pl->active[i].start_ns) / 1000000000));
	}
	pthread_mutex_unlock(&pl->active_lock);
}

int pipeline_active_item(struct pipeline *pl, int64_t item_id)
{
	int i, found = 0;

	pthread_mutex_lock(&pl->active_lock);
	for (i = 0; i < pl->nactive; i++)
		if (pl->active[i].item_id == item_id)
			found = 1;
	pthread_mutex_unlock(&pl->active_lock);
	return found;
}
