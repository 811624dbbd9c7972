/*
 * gate.h - the CI gate of leaks, diff, trend and report (gate.c): the
 * budget options (--fail-on EXPR, repeatable, and --budgets FILE), the
 * exceeded budgets said on stderr with exit status 3 (EXIT_BUDGET), and
 * --format junit. The budgets are parsed and evaluated by the library
 * (hd_budget_*); this file only collects and prints them.
 */
#ifndef CLI_GATE_H
#define CLI_GATE_H

#include "heapdump.h"
#include "opt.h"

#include <stdio.h>

struct cli_gate {
	hd_budget *b;       /* NULL until a budget is given */
	char error[600];    /* the first option's error, said by cli_parse */
};

const char *cli_gate_fail_on(const char *arg, void *gate);
const char *cli_gate_budgets(const char *arg, void *gate);

#define CLI_GATE_OPTS(g)                                                  \
	OPT_CALLBACK(0, "fail-on", "EXPR", g, cli_gate_fail_on,           \
		     "exit 3 when EXPR holds (leak.bytes>1MB; repeatable; " \
		     "heapdump-leaks(1), BUDGETS)"),                          \
	OPT_CALLBACK(0, "budgets", "FILE", g, cli_gate_budgets,           \
		     "the budgets of FILE, one EXPR a line, # comments")

/* 0, or EXIT_USAGE after the message when a budget does not apply to
 * source (HD_BUDGET_*). With junit and no budget, adds the default one
 * (dflt: "leak.verdict=leak"), or without one (trend, whose verdicts
 * have no noise threshold) refuses. */
int cli_gate_prepare(const struct cli_cmd_info *info, struct cli_gate *g,
		     unsigned source, int junit, const char *dflt);

/* Says each exceeded budget on stderr ("heapdump leaks: budget ...
 * exceeded: ..."); returns EXIT_BUDGET when one was, else 0. */
int cli_gate_say(const char *command, const hd_budget_report *r);

/* The budgets as JUnit XML on f: one testsuite of one testcase per
 * budget, a failure element for each exceeded one; verdict (or NULL)
 * as the suite's system-out. */
void cli_gate_junit(FILE *f, const char *command, char **inputs,
		    int ninputs, const hd_budget_report *r,
		    const char *verdict, double seconds);

void cli_gate_free(struct cli_gate *g);

#endif
