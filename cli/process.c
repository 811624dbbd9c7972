/*
 * process.c - the process growth between dumps: the RSS and malloc
 * figures of each input's sidecar (read by sidecar.c, the one place that
 * knows its name) and the heap's memsize, judged by the library
 * (hd_process_judge) and printed in its words, first, by leaks, diff,
 * trend, report and serve: in text a "process" line, only when the
 * growth is outside Ruby objects; in JSON the "process" member; in TSV
 * "process" lines.
 */
#include "process.h"
#include "sidecar.h"

#include <string.h>

void cli_process_sample(hd_process_sample *out, const char *path,
			const hd_store *s, uint64_t heap_memsize)
{
	struct cli_sidecar sc;
	const char *dump = path;
	hd_store_info si;

	memset(out, 0, sizeof(*out));
	if (s && hd_store_is_store(path)) {
		hd_store_info_get(&si, s);
		dump = si.source_path && *si.source_path ? si.source_path : "-";
	}
	if (strcmp(dump, "-") == 0 || !cli_sidecar_read(dump, &sc))
		return;
	out->has_rss = sc.has_rss;
	out->rss = sc.rss;
	out->has_malloc = sc.has_malloc;
	out->malloc_in_use = sc.malloc_in_use;
	cli_sidecar_free(&sc);
	out->heap_memsize = heap_memsize != UINT64_MAX ? heap_memsize :
			    s ? hd_process_heap_memsize(s) :
				0;
}

void cli_process_judge(hd_process_verdict *v, hd_store *const *s,
		       const struct cli_input *in, size_t n)
{
	hd_process_sample smp[3];
	size_t k;

	memset(v, 0, sizeof(*v));
	if (n < 2 || n > 3)
		return;
	for (k = 0; k < n; k++) {
		cli_process_sample(&smp[k], in[k].path, s[k], UINT64_MAX);
		if (!smp[k].has_rss)
			return;
	}
	if (hd_process_judge(v, smp, n, NULL, NULL))
		memset(v, 0, sizeof(*v));
}

void cli_process_text(FILE *f, const hd_process_verdict *v)
{
	if (!v->known || !v->outside_ruby)
		return;
	fputs("process   ", f);
	cli_text_string(f, v->text, strlen(v->text));
	fputs("\n          (the RSS of the gem's sidecars: native memory, "
	      "which no heap dump shows; what follows is the Ruby heap "
	      "only)\n\n",
	      f);
}

void cli_process_json(FILE *f, const hd_process_verdict *v)
{
	fputs("\"process\":", f);
	if (!v->known) {
		fputs("null", f);
		return;
	}
	fprintf(f, "{\"rss_growth\":%lld,\"malloc_growth\":",
		(long long)v->rss_growth);
	if (v->has_malloc)
		fprintf(f, "%lld", (long long)v->malloc_growth);
	else
		fputs("null", f);
	fprintf(f, ",\"heap_growth\":%lld,\"outside_ruby\":%s,\"text\":",
		(long long)v->heap_growth, v->outside_ruby ? "true" : "false");
	cli_json_string(f, v->text, strlen(v->text));
	fputc('}', f);
}

void cli_process_tsv(FILE *f, const hd_process_verdict *v)
{
	if (!v->known)
		return;
	fprintf(f, "process\toutside_ruby\t%d\n", v->outside_ruby);
	fprintf(f, "process\trss_growth\t%lld\n", (long long)v->rss_growth);
	if (v->has_malloc)
		fprintf(f, "process\tmalloc_growth\t%lld\n",
			(long long)v->malloc_growth);
	fprintf(f, "process\theap_growth\t%lld\n", (long long)v->heap_growth);
	fputs("process\ttext\t", f);
	cli_text_string(f, v->text, strlen(v->text));
	fputc('\n', f);
}
