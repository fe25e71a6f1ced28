/*
 * schema.h - the store's SQL migrations and the JSON Schemas, embedded at
 * build time by schema/embed.py from the files in schema/.
 *
 * schema_migrations[i] upgrades a store from version i to i + 1; the array
 * ends with NULL and schema_version is its length. The JSON Schemas are the
 * published contracts of pipeline.json and of one registry line; the C
 * validators in engine/format/config.c and engine/format/registry.c implement them.
 */
#ifndef PACKETFS_SCHEMA_H
#define PACKETFS_SCHEMA_H

extern const char *const schema_migrations[];
extern const int schema_version;
extern const char schema_json_pipeline[];
extern const char schema_json_registry_line[];

#endif
