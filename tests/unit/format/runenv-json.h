/*
 * runenv-json.h - what the runenv unit tests (test-runenv.c: the probe
 * script; test-runenv-parse.c: the parser on written logs) share: reading
 * the JSON object runenv_parse makes. Each function fails the test (exit
 * 1) on a broken expectation; one thread only.
 */
#ifndef PACKETFS_TEST_RUNENV_JSON_H
#define PACKETFS_TEST_RUNENV_JSON_H

#include <stddef.h>

#include <cjson/cJSON.h>

/* runenv_parse of log (len bytes) succeeds; its JSON, parsed
 * (cJSON_Delete it). */
cJSON *parse_ok(const char *log, size_t len);
/* The string member name of obj, or NULL when absent or not a string. */
const char *str_member(const cJSON *obj, const char *name);
/* The number member name of obj (it must be a number). */
double num_member(const cJSON *obj, const char *name);
/* Whether obj has a member name. */
int has_member(const cJSON *obj, const char *name);
/* obj's "complete" (it must be a boolean). */
int complete(const cJSON *obj);

#endif
