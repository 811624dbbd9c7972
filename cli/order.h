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

#endif
