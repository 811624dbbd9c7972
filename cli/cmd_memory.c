/*
 * cmd_memory.c - heapdump memory: where each dump's RSS goes (the
 * sidecar's figures of the whole process split by the library,
 * hd_memory_split_get), the instruction sequences by the line that made
 * them, and with several dumps each bucket's growth and the verdict
 * (hd_memory_judge). Parses and prints only.
 */
#include "cmd.h"
#include "common.h"
#include "opt.h"
#include "sidecar.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COMMAND_NAME "memory"

static struct {
	const char *format;
	unsigned long long top;
	int strict, quiet;
} A;

static const struct cli_opt opts[] = {
	OPT_STRING('f', "format", "FMT", &A.format,
		   "text (default), json or tsv"),
	OPT_UINT('n', "top", "N", &A.top,
		 "instruction sequence sites per dump (default 10, 0: all)"),
	OPT_FLAG(0, "strict", &A.strict, "fail at the first invalid line"),
	OPT_FLAG('q', "quiet", &A.quiet, "no progress meter"),
	OPT_END()
};

static const struct cli_cmd_info info = {
	COMMAND_NAME, "[options] DUMP|STORE...",
	"Where each dump's RSS goes: Ruby object slots, the malloc Ruby\n"
	"objects own, malloc outside them, malloc held free, thread stacks,\n"
	"JIT code, other anonymous and file-backed memory (from the sidecar\n"
	"the heapdump gem or heapdump dump writes beside the dump), and the\n"
	"instruction sequences by the line that made them. With several dumps\n"
	"of one process, in the order taken: each part's growth and the one\n"
	"that grew.",
	opts
};

struct one {
	const char *path;
	int has_sidecar;
	struct cli_sidecar sc;
	hd_memory_split split;
	hd_memory_sites sites; /* their files are the store's: open till printed */
	hd_store *s;
};

/* input k: its store for the memsize and the sites, its sidecar */
static int load(struct one *o, const char *path)
{
	struct cli_input in;
	hd_store *s = NULL;
	hd_store_info si;
	hd_error err = { 0 };
	const char *dump = path;
	int rc;

	o->path = path;
	cli_input_init(&in, path, A.strict, A.quiet);
	if ((rc = cli_open_store(&in, &s)))
		return rc;
	if (hd_store_is_store(path)) {
		hd_store_info_get(&si, s);
		dump = si.source_path && *si.source_path ? si.source_path : "-";
	}
	o->has_sidecar = strcmp(dump, "-") != 0 && cli_sidecar_read(dump, &o->sc);
	if (o->has_sidecar) {
		o->sc.mem.objects_memsize = hd_process_heap_memsize(s);
		o->sc.mem.has |= HD_MEM_HAS_MEMSIZE;
		hd_memory_split_get(&o->split, &o->sc.mem);
	}
	o->s = s;
	return hd_memory_iseq_sites(&o->sites, s, &err) ? cli_lib_error(&err) : 0;
}

static size_t shown(const struct one *o)
{
	return A.top && A.top < o->sites.n ? (size_t)A.top : o->sites.n;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* ---- text ---- */

static void text_signed(char *buf, size_t size, int64_t d)
{
	char h[32];

	cli_human_bytes(d < 0 ? (uint64_t)-d : (uint64_t)d, h, sizeof(h));
	snprintf(buf, size, "%s%s", d < 0 ? "-" : d ? "+" : "", h);
}

/* a sidecar's string, escaped, or dflt when empty */
static void text_or(const char *s, const char *dflt)
{
	if (!*s)
		s = dflt;
	cli_text_string(stdout, s, strlen(s));
}

static void text_one(const struct one *o)
{
	const hd_memory_split *sp = &o->split;
	char h[32];
	size_t i;
	int b;

	fputs("dump ", stdout);
	cli_text_string(stdout, o->path, strlen(o->path));
	if (!o->has_sidecar) {
		fputs(": no sidecar (DUMP.hdmeta, written by the heapdump gem "
		      "or heapdump dump): the process is not known\n", stdout);
	} else {
		printf(" (pid %llu, ruby ", (unsigned long long)o->sc.pid);
		text_or(o->sc.ruby_version, "?");
		fputs(", malloc ", stdout);
		text_or(o->sc.mem_allocator, "?");
		fputs(", from ", stdout);
		text_or(o->sc.mem_source, "an older sidecar");
		fputs(")\n", stdout);
		printf("  %-32s %10s  100.0%%\n", "rss",
		       cli_human_bytes(sp->rss, h, sizeof(h)));
		for (b = 0; b < HD_MEM_NBUCKETS; b++) {
			if (!(sp->measured & (1u << b)))
				continue;
			printf("  %-32s %10s  %5.1f%%\n",
			       hd_memory_bucket_label((hd_memory_bucket)b),
			       cli_human_bytes(sp->bytes[b], h, sizeof(h)),
			       pct(sp->bytes[b], sp->rss));
		}
		if (sp->overcount)
			printf("  (%s more of the figures than the anonymous "
			       "memory resident: malloc's free memory that is "
			       "not resident, mostly)\n",
			       cli_human_bytes(sp->overcount, h, sizeof(h)));
	}
	if (!o->sites.n)
		return;
	printf("  instruction sequences (IMEMO/iseq) by the line that made "
	       "them:\n");
	for (i = 0; i < shown(o); i++) {
		const hd_memory_site *x = &o->sites.site[i];

		printf("    %10s %8llu  ", cli_human_bytes(x->memsize, h, sizeof(h)),
		       (unsigned long long)x->count);
		if (x->file) {
			cli_text_string(stdout, x->file, x->file_len);
			printf(":%llu\n", (unsigned long long)x->line);
		} else {
			fputs("(not traced)\n", stdout);
		}
	}
	if (shown(o) < o->sites.n)
		printf("    ... %zu more sites\n", o->sites.n - shown(o));
}

static void text_growth(const hd_memory_verdict *v)
{
	char g[40];
	int b;

	printf("\ngrowth, first dump to last\n");
	text_signed(g, sizeof(g), v->rss_growth);
	printf("  %-32s %11s\n", "rss", g);
	for (b = 0; b < HD_MEM_NBUCKETS; b++) {
		if (!v->growth[b])
			continue;
		text_signed(g, sizeof(g), v->growth[b]);
		printf("  %-32s %11s\n",
		       hd_memory_bucket_label((hd_memory_bucket)b), g);
	}
	printf("verdict: %s\n", v->text);
}

/* ---- JSON ---- */

static void json_one(const struct one *o)
{
	const hd_memory_split *sp = &o->split;
	size_t i;
	int b;

	fputs("{\"path\":", stdout);
	cli_json_string(stdout, o->path, strlen(o->path));
	printf(",\"known\":%s", o->has_sidecar && sp->known ? "true" : "false");
	if (o->has_sidecar) {
		printf(",\"pid\":%llu,\"allocator\":",
		       (unsigned long long)o->sc.pid);
		cli_json_string(stdout, o->sc.mem_allocator,
				strlen(o->sc.mem_allocator));
		fputs(",\"source\":", stdout);
		cli_json_string(stdout, o->sc.mem_source,
				strlen(o->sc.mem_source));
		printf(",\"rss\":%llu,\"buckets\":{",
		       (unsigned long long)sp->rss);
		for (b = 0; b < HD_MEM_NBUCKETS; b++) {
			printf("%s\"%s\":", b ? "," : "",
			       hd_memory_bucket_key((hd_memory_bucket)b));
			if (sp->measured & (1u << b))
				printf("%llu", (unsigned long long)sp->bytes[b]);
			else
				fputs("null", stdout);
		}
		printf("},\"overcount\":%llu", (unsigned long long)sp->overcount);
	}
	fputs(",\"iseq_sites\":[", stdout);
	for (i = 0; i < shown(o); i++) {
		const hd_memory_site *x = &o->sites.site[i];

		fputs(i ? ",{\"file\":" : "{\"file\":", stdout);
		if (x->file)
			cli_json_string(stdout, x->file, x->file_len);
		else
			fputs("null", stdout);
		printf(",\"line\":%llu,\"count\":%llu,\"memsize\":%llu}",
		       (unsigned long long)x->line,
		       (unsigned long long)x->count,
		       (unsigned long long)x->memsize);
	}
	fputs("]}", stdout);
}

static void json_verdict(const hd_memory_verdict *v)
{
	int b;

	printf(",\"growth\":{\"rss\":%lld", (long long)v->rss_growth);
	for (b = 0; b < HD_MEM_NBUCKETS; b++)
		printf(",\"%s\":%lld", hd_memory_bucket_key((hd_memory_bucket)b),
		       (long long)v->growth[b]);
	printf("},\"verdict\":{\"group\":\"%s\",\"growth\":%lld,\"text\":",
	       hd_memory_group_key(v->group), (long long)v->group_growth);
	cli_json_string(stdout, v->text, strlen(v->text));
	fputs("}", stdout);
}

/* ---- TSV ---- */

static void tsv_one(const struct one *o)
{
	const hd_memory_split *sp = &o->split;
	size_t i;
	int b;

	if (o->has_sidecar) {
		fputs("rss\t", stdout);
		cli_text_string(stdout, o->path, strlen(o->path));
		printf("\t%llu\n", (unsigned long long)sp->rss);
		for (b = 0; b < HD_MEM_NBUCKETS; b++) {
			if (!(sp->measured & (1u << b)))
				continue;
			printf("bucket\t");
			cli_text_string(stdout, o->path, strlen(o->path));
			printf("\t%s\t%llu\n",
			       hd_memory_bucket_key((hd_memory_bucket)b),
			       (unsigned long long)sp->bytes[b]);
		}
	}
	for (i = 0; i < shown(o); i++) {
		const hd_memory_site *x = &o->sites.site[i];

		fputs("iseq\t", stdout);
		cli_text_string(stdout, o->path, strlen(o->path));
		fputs("\t", stdout);
		if (x->file)
			cli_text_string(stdout, x->file, x->file_len);
		printf("\t%llu\t%llu\t%llu\n", (unsigned long long)x->line,
		       (unsigned long long)x->count,
		       (unsigned long long)x->memsize);
	}
}

static void tsv_verdict(const hd_memory_verdict *v)
{
	int b;

	printf("growth\trss\t%lld\n", (long long)v->rss_growth);
	for (b = 0; b < HD_MEM_NBUCKETS; b++)
		printf("growth\t%s\t%lld\n",
		       hd_memory_bucket_key((hd_memory_bucket)b),
		       (long long)v->growth[b]);
	printf("verdict\t%s\t%lld\t", hd_memory_group_key(v->group),
	       (long long)v->group_growth);
	cli_text_string(stdout, v->text, strlen(v->text));
	fputs("\n", stdout);
}

static void print(const struct one *o, size_t n, int fmt,
		  const hd_memory_verdict *v)
{
	size_t k;

	if (fmt == CLI_JSON)
		fputs("{\"dumps\":[", stdout);
	for (k = 0; k < n; k++) {
		if (fmt == CLI_JSON) {
			if (k)
				fputs(",", stdout);
			json_one(&o[k]);
		} else if (fmt == CLI_TSV) {
			tsv_one(&o[k]);
		} else {
			if (k)
				fputs("\n", stdout);
			text_one(&o[k]);
		}
	}
	if (fmt == CLI_JSON) {
		fputs("]", stdout);
		if (v)
			json_verdict(v);
		fputs("}\n", stdout);
	} else if (v) {
		if (fmt == CLI_TSV)
			tsv_verdict(v);
		else
			text_growth(v);
	}
}

int cmd_memory(int argc, char **argv)
{
	hd_memory_split *splits = NULL;
	hd_memory_verdict v;
	hd_error err = { 0 };
	struct one *o = NULL;
	int first, rc, fmt, known = 0;
	size_t n, k;

	A.top = 10;
	if ((rc = cli_parse(&info, argc, argv, &first)))
		return rc < 0 ? EXIT_OK : rc;
	if ((rc = cli_parse_format(&info, A.format, 3, &fmt)))
		return rc;
	argc = cli_skip_sidecars(argc, argv, first);
	if (first >= argc)
		return cli_usage_error(&info, "needs a dump or a store");
	n = (size_t)(argc - first);
	if (!(o = calloc(n, sizeof(*o))) ||
	    !(splits = calloc(n, sizeof(*splits)))) {
		free(o);
		cli_error("out of memory");
		return EXIT_FAIL;
	}
	for (k = 0; k < n && !rc; k++) {
		rc = load(&o[k], argv[first + (int)k]);
		splits[k] = o[k].split;
		known += o[k].has_sidecar;
	}
	if (!rc) {
		int judged = n >= 2 && (size_t)known == n &&
			     hd_memory_judge(&v, splits, n, NULL, &err) == 0;

		print(o, n, fmt, judged ? &v : NULL);
		if (!known) {
			cli_error("no input has a sidecar: the process's memory "
				  "is not known");
			rc = EXIT_FAIL;
		}
	}
	for (k = 0; k < n; k++) {
		if (o[k].has_sidecar)
			cli_sidecar_free(&o[k].sc);
		hd_memory_sites_free(&o[k].sites);
		hd_store_close(o[k].s);
	}
	free(o);
	free(splits);
	return rc;
}
