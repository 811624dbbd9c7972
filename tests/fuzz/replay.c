/*
 * replay.c - runs a fuzz target over every file of a corpus directory
 * with the normal compiler, so `make check` keeps the corpus (and every
 * crash once found and fixed) as regression tests.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(n > 0 ? (size_t)n : 1);
	if (!buf || (n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n)) {
		fclose(f);
		free(buf);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	struct dirent *e;
	DIR *d;
	char path[4096];
	int n = 0, bad = 0;

	if (argc != 2 || !(d = opendir(argv[1]))) {
		printf("not ok - fuzz/replay: cannot open corpus '%s'\n",
		       argc > 1 ? argv[1] : "?");
		return 1;
	}
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", argv[1], e->d_name);
		if (replay(path))
			bad++;
		n++;
	}
	closedir(d);
	/* a crash never gets here: the runner reports the exit status */
	if (bad || !n)
		printf("not ok - fuzz/replay %s: %d unreadable, %d inputs\n",
		       argv[1], bad, n);
	else
		printf("ok - fuzz/replay %s (%d inputs)\n", argv[1], n);
	return bad || !n;
}
