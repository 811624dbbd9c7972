/*
 * html.h - pieces of HTML pages that heapdump writes (report): text from
 * a dump escaped for HTML, the page's frame with its inline style and a
 * Content-Security-Policy that allows no script and no network, numbers
 * that carry their exact value, share bars, and Graphviz's SVG inlined.
 * Everything is written to a FILE; nothing here allocates beyond a
 * string's escape buffer.
 */
#ifndef CLI_HTML_H
#define CLI_HTML_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * s[0..n) as HTML text, safe in element content and in a quoted
 * attribute value: first the text escapes of every heapdump output
 * (cli_text_string: controls as \u00XX, bytes that are not UTF-8 as
 * \xHH, bidi controls as \u202a...), then & < > " ' as character
 * references. A dump's class names, files and values go through it.
 */
void html_text(FILE *f, const char *s, size_t n);
/* html_text of a NUL-terminated string. */
void html_str(FILE *f, const char *s);

/* The page's start: doctype, charset, the CSP (no script, no network:
 * default-src 'none', inline style and data: images only), title (escaped),
 * the inline style sheet, then <body>. */
void html_begin(FILE *f, const char *title);
/* "</body></html>" and a newline. */
void html_end(FILE *f);

/* <data class="KEY" value="V">SHOWN</data>: a number as people read it
 * (SHOWN, our own text) with its exact value for scripts and tests. */
void html_num(FILE *f, const char *key, uint64_t v, const char *shown);
/* The same for a count: SHOWN is v with thousands separators. */
void html_count(FILE *f, const char *key, uint64_t v);
/* The same for a memsize: SHOWN is "1.5 MB", the title the bytes. */
void html_bytes(FILE *f, const char *key, uint64_t v);
/* A share (0 to 1) as "12.3%" with value "0.1234" and a bar. */
void html_share(FILE *f, const char *key, double share);

/*
 * Graphviz's SVG (svg[0..n)) inlined in the page: from its <svg
 * element on (no XML prolog or doctype), without comments, any
 * control byte other than tab, newline and return as '?'. Graphviz
 * escapes the text of its labels for XML, which is enough inside
 * HTML's <svg>.
 */
void html_svg(FILE *f, const char *svg, size_t n);

#endif
