/*
 * stacks_out.h - the tables of hd_stack_stats (stats --by stack|frame,
 * diff --by stack) as text or TSV; JSON is hd_stack_rows_json's (lib).
 */
#ifndef CLI_STACKS_OUT_H
#define CLI_STACKS_OUT_H

#include "common.h"

enum { CLI_STK_TEXT, CLI_STK_JSON, CLI_STK_TSV };

/* The table of r (rows of s) in fmt, at most top rows (0: all); title
 * names what is counted ("objects", "new objects"). JSON is one object
 * (no newline after it) for the caller to place. */
void cli_stacks_print(FILE *f, const hd_store *s, const hd_stack_rows *r,
		      int fmt, size_t top, const char *title);

#endif
