/*
 * msg.c - messages ("heapdump: ..." on stderr), the problem reports of
 * an input (the first few, then a summary), and the progress meter.
 */
#include "common.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Problems printed one by one before only the summary counts them. */
#define SHOW_PROBLEMS 5

/* Messages quote names from dumps and stores: escaped like text. */
void cli_error(const char *fmt, ...)
{
	char small[1024], *buf = small;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof(small) && (buf = malloc((size_t)n + 1))) {
		va_start(ap, fmt);
		vsnprintf(buf, (size_t)n + 1, fmt, ap);
		va_end(ap);
	} else if (n >= (int)sizeof(small)) {
		buf = small;
		n = (int)sizeof(small) - 1;
	}
	fprintf(stderr, "%s: ", PROGRAM_NAME);
	cli_text_string(stderr, buf, n > 0 ? (size_t)n : 0);
	fputc('\n', stderr);
	if (buf != small)
		free(buf);
}

int cli_lib_error(const hd_error *err)
{
	cli_error("%s", err->msg[0] ? err->msg : hd_strerror(err->code));
	return err->code == HD_EINVAL ? EXIT_USAGE : EXIT_FAIL;
}

double cli_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void on_problem(const hd_problem *p, void *payload)
{
	struct cli_input *in = payload;

	if (p->repaired)
		in->repaired++;
	else
		in->skipped++;
	if (!in->first_line)
		in->first_line = p->line;
	if (in->shown++ < SHOW_PROBLEMS) {
		if (in->progress)
			fputs("\r\033[K", stderr);
		fprintf(stderr, "%s: ", PROGRAM_NAME);
		cli_text_string(stderr, in->name, strlen(in->name));
		fprintf(stderr, ":%llu:%llu: ", (unsigned long long)p->line,
			(unsigned long long)p->column);
		cli_text_string(stderr, p->msg, strlen(p->msg));
		fprintf(stderr, " (%s)\n", p->repaired ? "repaired" : "skipped");
	}
}

hd_read_options cli_input_read_options(struct cli_input *in)
{
	hd_read_options o = HD_READ_OPTIONS_INIT;

	o.flags = in->strict ? HD_READ_STRICT : 0;
	o.problem = on_problem;
	o.payload = in;
	return o;
}

hd_index_options cli_input_index_options(struct cli_input *in)
{
	hd_index_options o = HD_INDEX_OPTIONS_INIT;

	o.read = cli_input_read_options(in);
	in->indexing = 1;
	o.progress = cli_progress;
	o.progress_payload = in;
	return o;
}

/* Progress names its input: a longer name by its last component, or
 * the end of it. */
#define PROGRESS_NAME 40

void cli_progress(uint64_t done, uint64_t total, void *payload)
{
	struct cli_input *in = payload;
	const char *name = in->name, *slash = strrchr(name, '/'), *cut = "";
	double now, rate;
	char a[32], b[32], r[32];

	if (!in->progress)
		return;
	if (strlen(name) > PROGRESS_NAME && slash && slash[1])
		name = slash + 1;
	if (strlen(name) > PROGRESS_NAME) {
		name += strlen(name) - PROGRESS_NAME;
		cut = "...";
	}
	now = cli_now();
	if (in->indexing && total && done >= total) {
		if (!in->phase)
			fprintf(stderr, "\r\033[K%s%s: indexing", cut, name);
		in->phase = 1;
		in->last = now;
		fflush(stderr);
		return;
	}
	if (now - in->last < 0.2)
		return;
	in->last = now;
	rate = (double)done / (now - in->t0 + 1e-9);
	cli_human_bytes(done, a, sizeof(a));
	cli_human_bytes((uint64_t)rate, r, sizeof(r));
	if (total && !done) {
		fprintf(stderr, "\r\033[K%s%s: reading 0 B / %s (0%%)", cut,
			name, cli_human_bytes(total, b, sizeof(b)));
	} else if (total && done <= total) {
		cli_human_bytes(total, b, sizeof(b));
		fprintf(stderr, "\r\033[K%s%s: reading %s / %s (%.0f%%), "
			"%s/s, %.0fs left", cut, name, a, b,
			100.0 * (double)done / (double)total, r,
			rate > 0 ? (double)(total - done) / rate : 0.0);
	} else {
		fprintf(stderr, "\r\033[K%s%s: reading %s, %s/s", cut, name,
			a, r);
	}
	fflush(stderr);
}

void cli_input_done(struct cli_input *in)
{
	char a[32], b[32];

	if (in->progress && in->last > 0)
		fputs("\r\033[K", stderr);
	if (in->repaired + in->skipped) {
		fprintf(stderr, "%s: ", PROGRAM_NAME);
		cli_text_string(stderr, in->name, strlen(in->name));
		fprintf(stderr,
			": %s line(s) repaired, %s skipped (first at line %llu)%s\n",
			cli_commas(in->repaired, a, sizeof(a)),
			cli_commas(in->skipped, b, sizeof(b)),
			(unsigned long long)in->first_line,
			in->shown > SHOW_PROBLEMS ? "; only the first 5 shown" : "");
	}
}
