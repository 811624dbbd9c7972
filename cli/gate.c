/*
 * gate.c - the CI gate: budget options, exit status 3, JUnit XML
 * (gate.h). The JUnit output follows the structure Jenkins, GitLab and
 * GitHub's test reporters read (testsuites > testsuite > properties,
 * testcase, system-out, system-err), checked against
 * tests/cli/junit.xsd by tests/cli/budgets.sh.
 */
#include "gate.h"
#include "common.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *gate_error(struct cli_gate *g, const char *what,
			      const hd_error *err)
{
	char esc[320];

	cli_text(esc, sizeof(esc), err->msg, strlen(err->msg));
	if (what)
		snprintf(g->error, sizeof(g->error), "%s: %s", what, esc);
	else
		snprintf(g->error, sizeof(g->error), "%s", esc);
	return g->error;
}

static int gate_list(struct cli_gate *g, hd_error *err)
{
	return g->b ? 0 : hd_budget_new(&g->b, err);
}

const char *cli_gate_fail_on(const char *arg, void *gate)
{
	struct cli_gate *g = gate;
	hd_error err = { 0 };

	if (gate_list(g, &err) || hd_budget_add(g->b, arg, strlen(arg), &err))
		return gate_error(g, NULL, &err);
	return NULL;
}

const char *cli_gate_budgets(const char *arg, void *gate)
{
	struct cli_gate *g = gate;
	hd_error err = { 0 };
	char *text = NULL, esc[200];
	size_t len = 0, cap = 0;
	FILE *f = strcmp(arg, "-") == 0 ? stdin : fopen(arg, "rb");
	int rc;

	if (!f) {
		snprintf(g->error, sizeof(g->error), "--budgets: %s: %s",
			 cli_text(esc, sizeof(esc), arg, strlen(arg)),
			 strerror(errno));
		return g->error;
	}
	for (;;) {
		size_t n;

		if (len == cap) {
			char *t = realloc(text, cap = cap ? cap * 2 : 4096);

			if (!t || cap > (1u << 20)) {
				free(t ? t : text);
				if (f != stdin)
					fclose(f);
				snprintf(g->error, sizeof(g->error),
					 "--budgets: %s: %s",
					 cli_text(esc, sizeof(esc), arg,
						  strlen(arg)),
					 t ? "over 1 MiB" : "out of memory");
				return g->error;
			}
			text = t;
		}
		n = fread(text + len, 1, cap - len, f);
		len += n;
		if (n == 0)
			break;
	}
	rc = ferror(f);
	if (f != stdin)
		fclose(f);
	if (rc) {
		free(text);
		snprintf(g->error, sizeof(g->error), "--budgets: %s: read error",
			 cli_text(esc, sizeof(esc), arg, strlen(arg)));
		return g->error;
	}
	rc = gate_list(g, &err) ||
	     hd_budget_add_text(g->b, text ? text : "", len, &err);
	free(text);
	if (rc) {
		char what[240];

		snprintf(what, sizeof(what), "%s",
			 cli_text(esc, sizeof(esc), arg, strlen(arg)));
		return gate_error(g, what, &err);
	}
	return NULL;
}

int cli_gate_prepare(const struct cli_cmd_info *info, struct cli_gate *g,
		     unsigned source, int junit, const char *dflt)
{
	hd_error err = { 0 };

	if (junit && !hd_budget_count(g->b) && !dflt)
		return cli_usage_error(info, "--format junit reports budgets: "
					     "give --fail-on EXPR or --budgets "
					     "FILE");
	if (junit && !hd_budget_count(g->b) &&
	    (gate_list(g, &err) ||
	     hd_budget_add(g->b, dflt, strlen(dflt), &err)))
		return cli_lib_error(&err);
	if (hd_budget_check(g->b, source, &err)) {
		char esc[300];

		return cli_usage_error(info, "%s",
				       cli_text(esc, sizeof(esc), err.msg,
						strlen(err.msg)));
	}
	return 0;
}

int cli_gate_say(const char *command, const hd_budget_report *r)
{
	size_t i;
	const hd_budget_result *x;

	for (i = 0; (x = hd_budget_report_get(r, i)); i++) {
		if (!x->exceeded)
			continue;
		fprintf(stderr, "%s %s: ", PROGRAM_NAME, command);
		cli_text_string(stderr, x->message, strlen(x->message));
		fputc('\n', stderr);
	}
	return hd_budget_report_exceeded(r) ? EXIT_BUDGET : 0;
}

/* s escaped for text (cli_text's escapes), then for XML. */
static void xml(FILE *f, const char *s)
{
	size_t n = strlen(s), len;
	char *esc = malloc(n * 6 + 1);
	const char *p;

	if (!esc)
		return;
	cli_text(esc, n * 6 + 1, s, n);
	for (p = esc; *p; p += len) {
		len = strcspn(p, "&<>\"'");
		fwrite(p, 1, len, f);
		if (!p[len])
			break;
		switch (p[len]) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputs("&apos;", f); break;
		}
		len++;
	}
	free(esc);
}

void cli_gate_junit(FILE *f, const char *command, char **inputs,
		    int ninputs, const hd_budget_report *r,
		    const char *verdict, double seconds)
{
	int k;
	size_t n = hd_budget_report_count(r), i;
	size_t failed = hd_budget_report_exceeded(r);
	const hd_budget_result *x;
	char stamp[32], host[256];
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
	if (gethostname(host, sizeof(host)) != 0)
		strcpy(host, "localhost");
	host[sizeof(host) - 1] = 0;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		   "<testsuites name=\"heapdump %s\" tests=\"%zu\" "
		   "failures=\"%zu\" errors=\"0\" time=\"%.3f\">\n",
		command, n, failed, seconds);
	fprintf(f, "  <testsuite name=\"heapdump %s\" tests=\"%zu\" "
		   "failures=\"%zu\" errors=\"0\" skipped=\"0\" "
		   "time=\"%.3f\" timestamp=\"%s\" hostname=\"",
		command, n, failed, seconds, stamp);
	xml(f, host);
	fputs("\">\n    <properties>\n"
	      "      <property name=\"dumps\" value=\"", f);
	for (k = 0; k < ninputs; k++) {
		if (k)
			fputc(' ', f);
		xml(f, inputs[k]);
	}
	fputs("\"/>\n    </properties>\n", f);
	for (i = 0; (x = hd_budget_report_get(r, i)); i++) {
		fputs("    <testcase name=\"", f);
		xml(f, x->text);
		fprintf(f, "\" classname=\"heapdump.%s\" time=\"0\"", command);
		if (!x->exceeded) {
			fputs("/>\n", f);
			continue;
		}
		fputs(">\n      <failure type=\"budget\" message=\"", f);
		xml(f, x->message);
		fputs("\">", f);
		xml(f, x->message);
		fputs("</failure>\n    </testcase>\n", f);
	}
	fputs("    <system-out>", f);
	if (verdict)
		xml(f, verdict);
	fputs("</system-out>\n    <system-err></system-err>\n"
	      "  </testsuite>\n</testsuites>\n", f);
}

void cli_gate_free(struct cli_gate *g)
{
	hd_budget_free(g->b);
	g->b = NULL;
}
