/*
 * identity.h - which dump a summary line is about, for fleet summaries
 * (stats --format ndjson): the columns every line of every summarizing
 * command carries, so that the summaries of many dumps, of many
 * processes and hosts, concatenate into one file a database loads.
 */
#ifndef CLI_IDENTITY_H
#define CLI_IDENTITY_H

#include <stdint.h>
#include <stdio.h>

struct cli_identity {
	const char *path;         /* as given ("-": standard input) */
	int has_pid;
	uint64_t pid;
	char host[256];           /* "" when unknown */
	char time[40];            /* ISO 8601 UTC, "" when unknown */
	char ruby_version[32];    /* "" when unknown */
	const char *ruby_from;    /* "sidecar", "dump" or NULL */
};

/*
 * The identity of the dump at path: pid, host, time and Ruby version
 * from the heapdump gem's sidecar (DUMP.hdmeta, or an older gem's
 * DUMP.meta.json) when there is one;
 * else the Ruby version from the dump itself (features, the HD_FEAT_
 * bits of its stats or store) when they name one version, and nothing
 * else. A store has no sidecar.
 */
void cli_identity_get(struct cli_identity *id, const char *path,
		      uint32_t features);

/*
 * The identity columns, as JSON members without the braces:
 * "path":...,"pid":...,"host":...,"time":...,"ruby_version":...,
 * "ruby_version_from":... (null for what is unknown).
 */
void cli_identity_json(FILE *f, const struct cli_identity *id);

#endif
