/*
 * html.c - pieces of the HTML pages heapdump writes: escaped text, the
 * page's frame and style, numbers with their exact values, bars, inline
 * SVG. See html.h.
 *
 * Every string of a dump goes through html_text: the text escaper
 * (cli_text), then HTML's character references. The frame has its
 * inline style and a Content-Security-Policy that allows no script and
 * no load; numbers carry their exact values in <data>; Graphviz's SVG is
 * inlined by html_svg. For any command that writes HTML (report).
 */
#include "html.h"
#include "common.h"

#include <stdlib.h>
#include <string.h>

void html_text(FILE *f, const char *s, size_t n)
{
	/* cli_text writes at most 6 bytes for one ("\u0001") */
	size_t size = n * 6 + 1;
	char *t = malloc(size);
	const char *p;

	if (!t) {
		fputs("(out of memory)", f);
		return;
	}
	cli_text(t, size, s, n);
	for (p = t; *p; p++) {
		switch (*p) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default: putc(*p, f);
		}
	}
	free(t);
}

void html_str(FILE *f, const char *s)
{
	html_text(f, s, strlen(s));
}

/* Light, quiet and printable; the bars are the only colour. */
static const char style[] =
	"body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;"
	"color:#1d2228;background:#fff;margin:0 auto;max-width:1100px;"
	"padding:1.5em 2em}"
	"h1{font-size:1.6em;margin:.2em 0 .1em}"
	"h2{font-size:1.25em;margin:1.6em 0 .4em;border-bottom:1px solid "
	"#d8dee4;padding-bottom:.2em}"
	"h3{font-size:1.05em;margin:1.2em 0 .3em}"
	".sub{color:#57606a;margin:0 0 1em}"
	".verdict{border-left:6px solid #cf222e;background:#fff5f5;"
	"padding:.6em 1em;margin:1em 0}"
	".verdict.calm{border-color:#1a7f37;background:#f3fbf5}"
	".verdict.note{border-color:#9a6700;background:#fffbea}"
	".verdict p.head{font-size:1.15em;font-weight:600;margin:.2em 0}"
	"ul.caveats{margin:.4em 0;padding-left:1.2em}"
	"ul.caveats li{margin:.2em 0}"
	"li.warn{color:#9a3412}"
	"table{border-collapse:collapse;margin:.4em 0 1em;font-size:13px}"
	"th,td{border-bottom:1px solid #e5e9ed;padding:.25em .6em;"
	"text-align:left;vertical-align:top}"
	"th{background:#f3f5f7;font-weight:600}"
	"tr:nth-child(even) td{background:#fafbfc}"
	"td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;"
	"white-space:nowrap}"
	"code,.addr,.shape{font-family:ui-monospace,'DejaVu Sans Mono',"
	"monospace;font-size:12.5px}"
	".addr{color:#57606a}"
	".suspect{border:1px solid #d8dee4;border-radius:6px;padding:.2em 1em "
	"1em;margin:1.2em 0}"
	".suspect h3 .rank{color:#cf222e}"
	"ol.path{list-style:none;padding-left:0;margin:.3em 0}"
	"ol.path li{padding:.1em 0 .1em 1.2em;position:relative}"
	"ol.path li:before{content:'\\2193';position:absolute;left:.2em;"
	"color:#8c959f}"
	"ol.path li.root:before{content:'\\25C9'}"
	".bar{display:inline-block;height:.7em;background:#cf222e;"
	"border-radius:2px;vertical-align:middle;margin-left:.4em;"
	"min-width:1px}"
	".barbox{display:inline-block;width:80px;background:#eef1f4;"
	"border-radius:2px;vertical-align:middle}"
	".drawing{overflow:auto;border:1px solid #e5e9ed;border-radius:4px;"
	"padding:.4em;max-height:640px}"
	".drawing svg{max-width:100%;height:auto}"
	".muted{color:#57606a}"
	"dl.kv{display:grid;grid-template-columns:max-content auto;"
	"gap:.15em 1em;margin:.4em 0}"
	"dl.kv dt{color:#57606a}dl.kv dd{margin:0}"
	"footer{margin-top:2.5em;color:#8c959f;font-size:12px}"
	"@media print{.drawing{max-height:none}}";

void html_begin(FILE *f, const char *title)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
	      "<meta charset=\"utf-8\">\n"
	      "<meta http-equiv=\"Content-Security-Policy\" "
	      "content=\"default-src 'none'; style-src 'unsafe-inline'; "
	      "img-src data:\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, "
	      "initial-scale=1\">\n"
	      "<meta name=\"generator\" content=\"heapdump\">\n<title>",
	      f);
	html_str(f, title);
	fprintf(f, "</title>\n<style>%s</style>\n</head>\n<body>\n", style);
}

void html_end(FILE *f)
{
	fputs("</body>\n</html>\n", f);
}

void html_num(FILE *f, const char *key, uint64_t v, const char *shown)
{
	fprintf(f, "<data class=\"%s\" value=\"%llu\">", key,
		(unsigned long long)v);
	html_str(f, shown);
	fputs("</data>", f);
}

void html_count(FILE *f, const char *key, uint64_t v)
{
	char a[32];

	html_num(f, key, v, cli_commas(v, a, sizeof(a)));
}

void html_bytes(FILE *f, const char *key, uint64_t v)
{
	char a[32], b[32];

	fprintf(f, "<data class=\"%s\" value=\"%llu\" title=\"%s bytes\">",
		key, (unsigned long long)v, cli_commas(v, b, sizeof(b)));
	html_str(f, cli_human_bytes(v, a, sizeof(a)));
	fputs("</data>", f);
}

void html_share(FILE *f, const char *key, double share)
{
	double pct = share * 100.0;

	if (!(pct >= 0))
		pct = 0;
	if (pct > 100)
		pct = 100;
	fprintf(f, "<data class=\"%s\" value=\"%.4f\">%.1f%%</data>"
		   "<span class=\"barbox\"><span class=\"bar\" "
		   "style=\"width:%.1f%%\"></span></span>",
		key, share, pct, pct);
}

void html_svg(FILE *f, const char *svg, size_t n)
{
	const char *end = svg + n, *p = svg, *q;

	/* from the <svg element on */
	while (p < end && !(end - p >= 4 && memcmp(p, "<svg", 4) == 0))
		p++;
	while (p < end) {
		if (end - p >= 4 && memcmp(p, "<!--", 4) == 0) {
			for (q = p + 4; q + 3 <= end && memcmp(q, "-->", 3); q++)
				;
			p = q + 3 <= end ? q + 3 : end;
			continue;
		}
		if ((unsigned char)*p < 0x20 && *p != '\t' && *p != '\n' &&
		    *p != '\r')
			putc('?', f);
		else if (*p == 0x7f)
			putc('?', f);
		else
			putc(*p, f);
		p++;
	}
}
