/*
 * process.h - did the process grow outside its Ruby heap between the
 * dumps? Each input's sidecar (sidecar.c) and heap into the library's
 * judgement (hd_process_judge), and its one sentence printed first by
 * leaks, diff, trend, report and serve.
 */
#ifndef CLI_PROCESS_H
#define CLI_PROCESS_H

#include "common.h"

#include <stdio.h>

/*
 * The sample of one input: the sidecar of path (a dump), or of the
 * source dump of s when path is a store (s may then not be NULL), and
 * the heap: heap_memsize, or when it is UINT64_MAX, s's
 * (hd_process_heap_memsize). has_rss is 0 without a sidecar, and the
 * heap is then not summed.
 */
void cli_process_sample(hd_process_sample *out, const char *path,
			const hd_store *s, uint64_t heap_memsize);

/* The judgement of n opened inputs (stores s[k] opened from in[k]):
 * known is 0 when one has no sidecar. */
void cli_process_judge(hd_process_verdict *v, hd_store *const *s,
		       const struct cli_input *in, size_t n);

/* Text: the sentence and what it means, then an empty line, only when
 * the growth is outside Ruby objects; else nothing. */
void cli_process_text(FILE *f, const hd_process_verdict *v);
/* JSON: "process":{...} or "process":null when not known (no comma). */
void cli_process_json(FILE *f, const hd_process_verdict *v);
/* TSV: process<TAB>name<TAB>value lines when known. */
void cli_process_tsv(FILE *f, const hd_process_verdict *v);

#endif
