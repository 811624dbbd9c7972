/*
 * stacks_out.c - the tables of hd_stack_stats for people (frames
 * escaped, innermost first: where the allocation happened, then who
 * called it) and as TSV (the stack folded, outermost first, frames
 * joined by ";"); JSON is the library's one writer (hd_stack_rows_json,
 * lib/leak_json.c), shared with leaks, serve and the gem.
 */
#include "stacks_out.h"

#include <string.h>

static void frame_text(FILE *f, const hd_store *s, uint32_t id)
{
	char buf[1024];
	hd_frame fr;
	size_t n;

	hd_store_frame(&fr, s, id);
	n = hd_frame_text(buf, sizeof(buf), &fr);
	cli_text_string(f, buf, n < sizeof(buf) ? n : sizeof(buf) - 1);
}

static void row_text(FILE *f, const hd_store *s, const hd_stack_rows *r,
		     const hd_stack_row *row)
{
	char a[32], b[32];
	size_t n, k;

	fprintf(f, "%12s %12s  ", cli_commas(row->count, a, sizeof(a)),
		cli_human_bytes(row->memsize, b, sizeof(b)));
	if (r->by == HD_STACKS_BY_FRAME) {
		frame_text(f, s, row->id);
		putc('\n', f);
		return;
	}
	n = hd_store_stack_frames(s, row->id, &(const uint32_t *){ NULL });
	for (k = n; k-- > 0;) {
		if (k + 1 < n)
			fprintf(f, "%27s<- ", "");
		frame_text(f, s, hd_store_stack_frame(s, row->id, k));
		putc('\n', f);
	}
	if (!n)
		fputs("(empty stack)\n", f);
}

static void print_text(FILE *f, const hd_store *s, const hd_stack_rows *r,
		       size_t shown, const char *title)
{
	char a[32], b[32], c[32];
	size_t i;

	fprintf(f, "%s with a stack: %s (%s); without: %s\n", title,
		cli_commas(r->with, a, sizeof(a)),
		cli_human_bytes(r->with_memsize, b, sizeof(b)),
		cli_commas(r->without, c, sizeof(c)));
	fprintf(f, "\nby %s (%s%s of %s%s)\n",
		r->by == HD_STACKS_BY_FRAME ? "frame" : "stack",
		shown < r->nrows ? "top " : "",
		cli_commas(shown, a, sizeof(a)), cli_commas(r->nrows, b, sizeof(b)),
		r->by == HD_STACKS_BY_FRAME ?
			" frames; each counts every object whose stack it is in" :
			" stacks, innermost frame first");
	fprintf(f, "%12s %12s  %s\n", "count", "memsize",
		r->by == HD_STACKS_BY_FRAME ? "frame" : "stack");
	for (i = 0; i < shown; i++)
		row_text(f, s, r, &r->rows[i]);
}

static void print_tsv(FILE *f, const hd_store *s, const hd_stack_rows *r,
		      size_t shown)
{
	size_t i, k, n;

	fprintf(f, "count\tmemsize\t%s\n",
		r->by == HD_STACKS_BY_FRAME ? "frame" : "stack");
	for (i = 0; i < shown; i++) {
		const hd_stack_row *row = &r->rows[i];

		fprintf(f, "%llu\t%llu\t", (unsigned long long)row->count,
			(unsigned long long)row->memsize);
		if (r->by == HD_STACKS_BY_FRAME) {
			frame_text(f, s, row->id);
			putc('\n', f);
			continue;
		}
		n = hd_store_stack_frames(s, row->id, &(const uint32_t *){ NULL });
		for (k = 0; k < n; k++) {
			if (k)
				putc(';', f);
			frame_text(f, s, hd_store_stack_frame(s, row->id, k));
		}
		putc('\n', f);
	}
}

void cli_stacks_print(FILE *f, const hd_store *s, const hd_stack_rows *r,
		      int fmt, size_t top, const char *title)
{
	size_t shown = top && top < r->nrows ? top : r->nrows;

	if (fmt == CLI_STK_JSON)
		hd_stack_rows_json(f, s, r, shown);
	else if (fmt == CLI_STK_TSV)
		print_tsv(f, s, r, shown);
	else
		print_text(f, s, r, shown, title);
}
