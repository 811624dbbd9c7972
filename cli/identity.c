/*
 * identity.c - the identity columns of fleet summaries (identity.h):
 * from the gem's sidecar, else what the dump tells, else null.
 */
#include "identity.h"
#include "common.h"
#include "sidecar.h"

#include <string.h>

/* "3.1" but not "4.0 or later" nor "2.5 to 3.1": one version */
static int one_version(const char *s)
{
	size_t n = strspn(s, "0123456789.");

	return n > 0 && s[n] == '\0' && strchr(s, '.') != NULL;
}

void cli_identity_get(struct cli_identity *id, const char *path,
		      uint32_t features)
{
	struct cli_sidecar sc;
	char buf[64];

	memset(id, 0, sizeof(*id));
	id->path = path;
	if (!hd_store_is_store(path) && cli_sidecar_read(path, &sc)) {
		id->has_pid = 1;
		id->pid = sc.pid;
		memcpy(id->host, sc.host, sizeof(id->host));
		memcpy(id->time, sc.time, sizeof(id->time));
		memcpy(id->ruby_version, sc.ruby_version,
		       sizeof(id->ruby_version));
		cli_sidecar_free(&sc);
		if (id->ruby_version[0]) {
			id->ruby_from = "sidecar";
			return;
		}
	}
	hd_features_ruby(buf, sizeof(buf), features);
	if (one_version(buf) && strlen(buf) < sizeof(id->ruby_version)) {
		strcpy(id->ruby_version, buf);
		id->ruby_from = "dump";
	}
}

static void str_or_null(FILE *f, const char *s)
{
	if (*s)
		cli_json_string(f, s, strlen(s));
	else
		fputs("null", f);
}

void cli_identity_json(FILE *f, const struct cli_identity *id)
{
	fputs("\"path\":", f);
	cli_json_string(f, id->path, strlen(id->path));
	if (id->has_pid)
		fprintf(f, ",\"pid\":%llu", (unsigned long long)id->pid);
	else
		fputs(",\"pid\":null", f);
	fputs(",\"host\":", f);
	str_or_null(f, id->host);
	fputs(",\"time\":", f);
	str_or_null(f, id->time);
	fputs(",\"ruby_version\":", f);
	str_or_null(f, id->ruby_version);
	fputs(",\"ruby_version_from\":", f);
	if (id->ruby_from)
		fprintf(f, "\"%s\"", id->ruby_from);
	else
		fputs("null", f);
}
