/*
 * runenv-json.c - reading the environment JSON of a run in the runenv unit
 * tests (test-runenv.c, test-runenv-parse.c); runenv-json.h.
 */
#include <stdlib.h>

#include "runenv-json.h"
#include "runenv.h"
#include "test.h"

cJSON *parse_ok(const char *log, size_t len)
{
	char *json = NULL;
	cJSON *obj;

	ASSERT_EQ(runenv_parse(log, len, &json), 0);
	ASSERT(json != NULL);
	obj = cJSON_Parse(json);
	if (!obj)
		FAIL_AT("not JSON: %s", json);
	free(json);
	return obj;
}

const char *str_member(const cJSON *obj, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

double num_member(const cJSON *obj, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, name);

	if (!cJSON_IsNumber(v))
		FAIL_AT("member %s is not a number", name);
	return v->valuedouble;
}

int has_member(const cJSON *obj, const char *name)
{
	return cJSON_GetObjectItemCaseSensitive(obj, name) != NULL;
}

int complete(const cJSON *obj)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, "complete");

	ASSERT(cJSON_IsBool(v));
	return cJSON_IsTrue(v);
}

