/*
 * order.c - are the dumps of a diff in the order they were taken, and of
 * one process? The library compares them (hd_order_check); this file
 * finds each dump's sidecar (the gem's DUMP.hdmeta or an older DUMP.meta.json, beside the dump or
 * beside a store's source dump) for the pid and time, and says what was
 * found (hd_order_text: the words the gem raises too).
 */
#include "order.h"
#include "sidecar.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cli_dump_origin(const char *dump, hd_dump_origin *o, char *time,
		     size_t size)
{
	struct cli_sidecar sc;

	memset(o, 0, sizeof(*o));
	time[0] = '\0';
	if (strcmp(dump, "-") == 0 || !cli_sidecar_read(dump, &sc))
		return;
	o->pid = sc.pid;
	o->time_us = hd_time_us(sc.time);
	o->compactions = sc.has_compact_count ? sc.compact_count + 1 : 0;
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

/* One finding of pair p (hd_order_text: the gem raises the same text). */
static void say(const hd_order_pair *p, unsigned int finding,
		const char *first, const char *second, const char *t0,
		const char *t1, int force)
{
	char small[1024], *buf = small;
	int n = hd_order_text(small, sizeof(small), p, finding, first, second,
			      t0, t1, force);

	if (n <= 0)
		return;
	if ((size_t)n >= sizeof(small) && (buf = malloc((size_t)n + 1)))
		hd_order_text(buf, (size_t)n + 1, p, finding, first, second,
			      t0, t1, force);
	cli_error("%s", buf ? buf : small);
	if (buf != small)
		free(buf);
}

int cli_order_pairs(hd_order_pair *p, char (*times)[40],
		    hd_store *const *s, const struct cli_input *in, size_t n)
{
	hd_dump_origin o[3];
	hd_error err = { 0 };
	size_t k;

	if (n < 2 || n > 3)
		return 0;
	for (k = 0; k < n; k++)
		origin_of(s[k], &in[k], &o[k], times[k], sizeof(times[k]));
	if (hd_order_check(p, (const hd_store *const *)s, o, n, &err))
		return cli_lib_error(&err);
	return 0;
}

int cli_check_order(hd_store *const *s, const struct cli_input *in,
		    size_t n, int force)
{
	hd_order_pair p[2];
	char times[3][40];
	int rc;

	if (n < 2 || n > 3)
		return 0;
	if ((rc = cli_order_pairs(p, times, s, in, n)))
		return rc;
	return cli_order_report(p, in, times, n, force);
}

int cli_order_report(const hd_order_pair *p, const struct cli_input *in,
		     char (*times)[40], size_t n, int force)
{
	size_t k;
	int reversed = 0;

	for (k = 0; k + 1 < n; k++) {
		const char *x = in[k].name, *y = in[k + 1].name;

		if (p[k].flags & HD_ORDER_OTHER_PROCESS)
			say(&p[k], HD_ORDER_OTHER_PROCESS, x, y, NULL, NULL, 0);
		else if (p[k].flags & HD_ORDER_FEW_SHARED)
			say(&p[k], HD_ORDER_FEW_SHARED, x, y, NULL, NULL, 0);
		if (p[k].flags & HD_ORDER_REVERSED) {
			say(&p[k], HD_ORDER_REVERSED, x, y, times[k],
			    times[k + 1], force);
			reversed = 1;
		}
	}
	return reversed && !force ? EXIT_USAGE : 0;
}

int cli_leak_session_open(hd_leak_session **out, hd_store *const *s,
			  const struct cli_input *in, size_t n,
			  const hd_leak_session_options *o, int force,
			  char (*times)[40])
{
	hd_leak_session_options so = *o;
	hd_dump_origin org[HD_LEAK_SESSION_MAX_DUMPS];
	char own[HD_LEAK_SESSION_MAX_DUMPS][40];
	hd_error err = { 0 };
	size_t k, np;
	int rc;

	*out = NULL;
	if (n > HD_LEAK_SESSION_MAX_DUMPS)
		n = HD_LEAK_SESSION_MAX_DUMPS; /* refused below */
	if (!times)
		times = own;
	for (k = 0; k < n; k++)
		origin_of(s[k], &in[k], &org[k], times[k], sizeof(times[k]));
	so.origins = org;
	if (hd_leak_session_new(out, s, n, &so, &err))
		return cli_lib_error(&err);
	if ((rc = cli_order_report(hd_leak_session_order(*out, &np), in,
				   times, n, force))) {
		hd_leak_session_free(*out);
		*out = NULL;
		return rc;
	}
	return 0;
}

int cli_leak_session(hd_leak_session **out, hd_store *const *s,
		     const struct cli_input *in, size_t n,
		     const hd_leak_session_options *o, int force,
		     char (*times)[40])
{
	hd_error err = { 0 };
	int rc;

	if ((rc = cli_leak_session_open(out, s, in, n, o, force, times)))
		return rc;
	if (hd_leak_session_run(*out, &err)) {
		rc = cli_lib_error(&err);
		hd_leak_session_free(*out);
		*out = NULL;
		return rc;
	}
	return 0;
}
