/*
 * order.c - are the dumps of a diff in the order they were taken, and of
 * one process? The library compares them (hd_order_check); this file
 * finds each dump's sidecar (the gem's DUMP.meta.json, beside the dump or
 * beside a store's source dump) for the pid and time, and says what was
 * found.
 */
#include "order.h"
#include "sidecar.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* "2026-11-24T10:00:00.123456Z" to microseconds since the epoch; 0 when
 * it is not that. */
static int64_t parse_time(const char *t)
{
	struct tm tm;
	unsigned long us = 0;
	int n = 0, digits;
	const char *p;
	time_t secs;

	memset(&tm, 0, sizeof(tm));
	if (sscanf(t, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon,
		   &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &n) != 6)
		return 0;
	p = t + n;
	if (*p == '.') {
		for (p++, digits = 0; *p >= '0' && *p <= '9'; p++, digits++)
			if (digits < 6)
				us = us * 10 + (unsigned long)(*p - '0');
		for (; digits < 6; digits++)
			us *= 10;
	}
	if (*p != 'Z' || p[1])
		return 0;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	secs = timegm(&tm);
	if (secs <= 0)
		return 0;
	return (int64_t)secs * 1000000 + (int64_t)us;
}

void cli_dump_origin(const char *dump, hd_dump_origin *o, char *time,
		     size_t size)
{
	struct cli_sidecar sc;

	memset(o, 0, sizeof(*o));
	time[0] = '\0';
	if (strcmp(dump, "-") == 0 || !cli_sidecar_read(dump, &sc))
		return;
	o->pid = sc.pid;
	o->time_us = parse_time(sc.time);
	if (o->time_us)
		snprintf(time, size, "%s", sc.time);
	cli_sidecar_free(&sc);
}

/* The sidecar of an input: beside the dump, or beside a store's source. */
static void origin_of(hd_store *s, const struct cli_input *in,
		      hd_dump_origin *o, char *time, size_t size)
{
	const char *dump = in->path;
	hd_store_info info;

	if (hd_store_is_store(in->path)) {
		hd_store_info_get(&info, s);
		dump = info.source_path && *info.source_path ?
			       info.source_path :
			       "-";
	}
	cli_dump_origin(dump, o, time, size);
}

static void say_reversed(const hd_order_pair *p, const char *first,
			 const char *second, const char *t0, const char *t1,
			 int force)
{
	char why[512];

	if (p->flags & HD_ORDER_TIME_BACKWARDS)
		snprintf(why, sizeof(why),
			 "by their sidecars '%s' was taken at %s, before '%s' "
			 "(%s)", second, t1, first, t0);
	else
		snprintf(why, sizeof(why),
			 "the newest allocation generation goes back from "
			 "%llu in '%s' to %llu in '%s' (GC.count never goes "
			 "back in a process; or nothing allocated since '%s' "
			 "is alive in '%s')",
			 (unsigned long long)p->generation[0], first,
			 (unsigned long long)p->generation[1], second, first,
			 second);
	if (force)
		cli_error("warning: '%s' and '%s' seem to be in the wrong "
			  "order: %s; compared as given (--force)",
			  first, second, why);
	else
		cli_error("'%s' and '%s' seem to be in the wrong order: %s; "
			  "give the dumps oldest first, or --force to "
			  "compare them as given",
			  first, second, why);
}

int cli_check_order(hd_store *const *s, const struct cli_input *in,
		    size_t n, int force)
{
	hd_dump_origin o[3];
	hd_order_pair p[2];
	char times[3][40];
	hd_error err = { 0 };
	size_t k;

	if (n < 2 || n > 3)
		return 0;
	for (k = 0; k < n; k++)
		origin_of(s[k], &in[k], &o[k], times[k], sizeof(times[k]));
	if (hd_order_check(p, (const hd_store *const *)s, o, n, &err))
		return cli_lib_error(&err);
	return cli_order_report(p, in, times, n, force);
}

int cli_order_report(const hd_order_pair *p, const struct cli_input *in,
		     char (*times)[40], size_t n, int force)
{
	char a[32], b[32];
	size_t k;
	int reversed = 0;

	for (k = 0; k + 1 < n; k++) {
		const char *x = in[k].name, *y = in[k + 1].name;

		if (p[k].flags & HD_ORDER_OTHER_PROCESS)
			cli_error("warning: '%s' (pid %llu) and '%s' (pid %llu) "
				  "are dumps of two different processes, by "
				  "their sidecars: the objects of one are all "
				  "new to the other",
				  x, (unsigned long long)p[k].origin[0].pid, y,
				  (unsigned long long)p[k].origin[1].pid);
		else if (p[k].flags & HD_ORDER_FEW_SHARED)
			cli_error("warning: '%s' and '%s' have only %s of %s "
				  "addresses in common: dumps of two different "
				  "processes? (or a compaction moved nearly "
				  "everything between them); between two "
				  "processes every object looks new",
				  x, y, cli_commas(p[k].shared, a, sizeof(a)),
				  cli_commas(p[k].objects[0] < p[k].objects[1] ?
						     p[k].objects[0] :
						     p[k].objects[1],
					     b, sizeof(b)));
		if (p[k].flags & HD_ORDER_REVERSED) {
			say_reversed(&p[k], x, y, times[k], times[k + 1],
				     force);
			reversed = 1;
		}
	}
	return reversed && !force ? EXIT_USAGE : 0;
}
