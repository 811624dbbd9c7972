/*
 * t_dump.h - a store from a dump's text, for the unit tests that build
 * stores from small crafted dumps (t.h stays free of the library).
 *
 * t_store_of(text, len) writes the text to a fresh file in a directory
 * of the program's own under $TMPDIR (made at the first call, removed
 * with its files at exit) and builds a store from it. The file stays
 * while the program runs: a store reads its records back from it.
 * NULL on failure, with the reason on stderr.
 */
#ifndef T_DUMP_H
#define T_DUMP_H

#include "heapdump.h"

#include <stdio.h>
#include <stdlib.h>

static inline char *t_dump_dir_(void)
{
	static char dir[256];

	return dir;
}

static inline void t_dump_cleanup_(void)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", t_dump_dir_());
	if (system(cmd) != 0)
		fprintf(stderr, "# could not remove %s\n", t_dump_dir_());
}

static inline hd_store *t_store_of(const char *text, size_t len)
{
	static int files;
	char *dir = t_dump_dir_(), path[320];
	hd_store *s = NULL;
	hd_error err;
	FILE *f;

	if (!dir[0]) {
		const char *t = getenv("TMPDIR");

		snprintf(dir, 256, "%s/hd_t.XXXXXX", t && *t ? t : "/tmp");
		if (!mkdtemp(dir)) {
			perror("# mkdtemp");
			dir[0] = '\0';
			return NULL;
		}
		atexit(t_dump_cleanup_);
	}
	snprintf(path, sizeof(path), "%s/d%d.json", dir, files++);
	f = fopen(path, "wb");
	if (!f || fwrite(text, 1, len, f) != len || fclose(f) != 0) {
		fprintf(stderr, "# could not write %s\n", path);
		return NULL;
	}
	if (hd_store_build(&s, path, NULL, &err)) {
		fprintf(stderr, "# build: %s\n", err.msg);
		return NULL;
	}
	return s;
}

#endif /* T_DUMP_H */
