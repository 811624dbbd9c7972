/*
 * order.h - the dumps of diff, leaks and interface-with --later must be
 * of one process, oldest first: hd_order_check() on them, with the pid
 * and time of the gem's sidecars, and its findings on stderr.
 */
#ifndef CLI_ORDER_H
#define CLI_ORDER_H

#include "common.h"

#include <stddef.h>

/*
 * Checks the n stores s (opened from in[k]), each against the next, and
 * prints what it finds on stderr: dumps in the wrong order, of two
 * processes. Returns 0, or EXIT_USAGE when a pair is clearly in the
 * reverse order and force is 0 (with force, a warning).
 */
int cli_check_order(hd_store *const *s, const struct cli_input *in,
		    size_t n, int force);

/*
 * What cli_check_order checks, without a word: the n - 1 pairs of the n
 * stores s (opened from in[k]) into p, and each one's sidecar time into
 * times[k] ("" if none), for cli_order_report and for commands that
 * also say it elsewhere (report). Returns 0 or an exit code.
 */
int cli_order_pairs(hd_order_pair *p, char (*times)[40],
		    hd_store *const *s, const struct cli_input *in, size_t n);

/* The pid and time of the sidecar beside dump (zeros when there is none,
 * or for "-"), and its time as written into time[size] ("" if none). */
void cli_dump_origin(const char *dump, hd_dump_origin *o, char *time,
		     size_t size);

/*
 * Says what the n - 1 pairs p found about the inputs in[0..n) (times[k]:
 * each one's sidecar time, for the message) as cli_check_order does.
 * Returns 0, or EXIT_USAGE for a reversed pair without force.
 */
int cli_order_report(const hd_order_pair *p, const struct cli_input *in,
		     char (*times)[40], size_t n, int force);

/*
 * The leak session of leaks, report and serve (hd_leak_session): the
 * origins of the n inputs from their sidecars (their times into
 * times[k] when times is not NULL, "" if none), the order check said on
 * stderr as cli_check_order says it, then the run. Returns 0 (*out
 * holds the run session), EXIT_USAGE for a reversed pair without
 * force, or EXIT_FAIL (the library's error said).
 */
int cli_leak_session(hd_leak_session **out, hd_store *const *s,
		     const struct cli_input *in, size_t n,
		     const hd_leak_session_options *o, int force,
		     char (*times)[40]);
/* cli_leak_session without the run (serve runs it while serving) */
int cli_leak_session_open(hd_leak_session **out, hd_store *const *s,
			  const struct cli_input *in, size_t n,
			  const hd_leak_session_options *o, int force,
			  char (*times)[40]);

#endif
