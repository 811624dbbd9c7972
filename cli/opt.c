/*
 * opt.c - the option-table wrapper over getopt_long(3).
 *
 * One table drives both parsing and --help; a mistyped option, like a
 * mistyped command in main.c, gets the nearest one (hd_name_distance).
 * --by values are parsed here too (cli_parse_keys).
 */
#include "opt.h"
#include "common.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define MAX_OPTS 64

/* The message quotes what the user typed: escaped as text (cli_error). */
int cli_usage_error(const struct cli_cmd_info *info, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	fprintf(stderr, "%s %s: ", PROGRAM_NAME, info->name);
	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	else if ((size_t)n >= sizeof(buf))
		n = (int)sizeof(buf) - 1;
	cli_text_string(stderr, buf, (size_t)n);
	fprintf(stderr, "\nusage: %s %s %s\n", PROGRAM_NAME, info->name,
		info->usage);
	fprintf(stderr, "see '%s %s --help'\n", PROGRAM_NAME, info->name);
	return 2;
}

int cli_parse_format(const struct cli_cmd_info *info, const char *name,
		     int n, int *fmt)
{
	static const char *const names[] = { "text", "json", "tsv",
					     "ndjson" };
	int i;

	*fmt = CLI_TEXT;
	if (!name)
		return 0;
	for (i = 0; i < n && i < (int)(sizeof(names) / sizeof(names[0])); i++)
		if (strcmp(name, names[i]) == 0) {
			*fmt = i;
			return 0;
		}
	return cli_usage_error(info, "unknown format '%s'", name);
}

void cli_help(FILE *f, const struct cli_cmd_info *info)
{
	const struct cli_opt *o;

	fprintf(f, "usage: %s %s %s\n\n%s\n\noptions:\n", PROGRAM_NAME,
		info->name, info->usage, info->summary);
	for (o = info->opts; o && o->type != CLI_OPT_END; o++) {
		char left[64];
		int n = 0;

		if (o->shortname)
			n = snprintf(left, sizeof(left), "-%c, ", o->shortname);
		else
			n = snprintf(left, sizeof(left), "    ");
		snprintf(left + n, sizeof(left) - (size_t)n, "--%s%s%s",
			 o->longname, o->argname ? " " : "",
			 o->argname ? o->argname : "");
		fprintf(f, "  %-28s %s\n", left, o->help);
	}
	fprintf(f, "  %-28s %s\n", "-h, --help", "show this help");
}

static int parse_uint(const char *s, unsigned long long *out)
{
	char *end;

	if (!*s || *s == '-')
		return -1;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return errno || *end ? -1 : 0;
}

static int apply(const struct cli_cmd_info *info, const struct cli_opt *o,
		 const char *arg)
{
	const char *msg;

	switch (o->type) {
	case CLI_OPT_FLAG:
		*(int *)o->target = 1;
		return 0;
	case CLI_OPT_STRING:
		*(const char **)o->target = arg;
		return 0;
	case CLI_OPT_UINT:
		if (parse_uint(arg, o->target))
			return cli_usage_error(info,
					       "--%s wants a whole number, not '%s'",
					       o->longname, arg);
		return 0;
	case CLI_OPT_CALLBACK:
		msg = o->cb(arg, o->target);
		if (msg)
			return cli_usage_error(info, "--%s: %s", o->longname,
					       msg);
		return 0;
	default:
		return 2;
	}
}

/* The i-th long option name of the table, "help" after them, then NULL. */
static const char *opt_name(const struct cli_cmd_info *info, size_t i)
{
	size_t k = 0;

	while (info->opts && info->opts[k].type != CLI_OPT_END && k < i)
		k++;
	if (info->opts && info->opts[k].type != CLI_OPT_END)
		return info->opts[k].longname;
	return k == i ? "help" : NULL;
}

/* The long option spelled p[0..n) (whole, or a unique prefix as
 * getopt_long takes it): its name, or NULL; *many when it is ambiguous. */
static const char *long_name(const struct cli_cmd_info *info, const char *p,
			     size_t n, int *many)
{
	const char *hit = NULL, *name;
	int hits = 0;
	size_t i;

	for (i = 0; (name = opt_name(info, i)); i++) {
		if (strlen(name) == n && strncmp(name, p, n) == 0) {
			*many = 0;
			return name;
		}
		if (strncmp(name, p, n) == 0 && hits++ == 0)
			hit = name;
	}
	*many = hits > 1;
	return hits == 1 ? hit : NULL;
}

/* The long option nearest to p[0..n), within two edits, or NULL. */
static const char *nearest_long(const struct cli_cmd_info *info,
				const char *p, size_t n)
{
	const char *best = NULL, *name;
	unsigned d, bd = 3;
	size_t i;

	for (i = 0; (name = opt_name(info, i)); i++) {
		d = hd_name_distance(p, n, name, strlen(name), 2);
		if (d < bd) {
			bd = d;
			best = name;
		}
	}
	return best;
}

/* What is wrong with the long option arg ("--name" or "--name=value"). */
static int bad_long(const struct cli_cmd_info *info, const char *arg)
{
	const char *p = arg + 2, *eq = strchr(p, '='), *name, *near;
	size_t n = eq ? (size_t)(eq - p) : strlen(p);
	int many;

	if ((name = long_name(info, p, n, &many)))
		return cli_usage_error(info, "option '--%s' takes no value",
				       name);
	if (many) {
		char list[256];
		size_t i, k = 0;

		list[0] = '\0';
		for (i = 0; (name = opt_name(info, i)); i++)
			if (strncmp(name, p, n) == 0 && k < sizeof(list))
				k += (size_t)snprintf(list + k, sizeof(list) - k,
						      "%s--%s", k ? ", " : "",
						      name);
		return cli_usage_error(info, "option '--%.*s' is ambiguous: %s",
				       (int)n, p, list);
	}
	if ((near = nearest_long(info, p, n)))
		return cli_usage_error(info, "unknown option '%s'; did you "
					     "mean '--%s'?", arg, near);
	return cli_usage_error(info, "unknown option '%s'", arg);
}

/* getopt_long's '?': an unknown option, an ambiguous prefix, or a flag
 * given a value (optopt is then the option's val). */
static int bad_option(const struct cli_cmd_info *info, int argc,
		      char **argv)
{
	const char *arg = optind > 0 && optind <= argc ? argv[optind - 1] :
							 NULL;

	if (optopt >= 256)
		return cli_usage_error(info, "option '--%s' takes no value",
				       info->opts[optopt - 256].longname);
	if (arg && strncmp(arg, "--", 2) == 0 && (optopt == 0 || optopt == 'h'))
		return bad_long(info, arg);
	if (optopt > 0x20 && optopt < 0x7f)
		return cli_usage_error(info, "unknown option '-%c'", optopt);
	return cli_usage_error(info, "unknown option (byte 0x%02x)",
			       (unsigned)optopt & 0xffu);
}

int cli_parse(const struct cli_cmd_info *info, int argc, char **argv,
	      int *first)
{
	struct option lo[MAX_OPTS + 2];
	char so[MAX_OPTS * 2 + 4];
	const struct cli_opt *o;
	size_t n = 0, s = 0;
	int c, idx;

	so[s++] = ':'; /* report a missing value as ':' */
	for (o = info->opts; o && o->type != CLI_OPT_END && n < MAX_OPTS;
	     o++, n++) {
		lo[n].name = o->longname;
		lo[n].has_arg = o->argname ? required_argument : no_argument;
		lo[n].flag = NULL;
		lo[n].val = 256 + (int)n;
		if (o->shortname) {
			so[s++] = (char)o->shortname;
			if (o->argname)
				so[s++] = ':';
		}
	}
	lo[n].name = "help";
	lo[n].has_arg = no_argument;
	lo[n].flag = NULL;
	lo[n].val = 'h';
	memset(&lo[n + 1], 0, sizeof(lo[n + 1]));
	so[s++] = 'h';
	so[s] = '\0';
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, so, lo, &idx)) != -1) {
		if (c == 'h') {
			cli_help(stdout, info);
			return -1;
		}
		if (c == '?')
			return bad_option(info, argc, argv);
		if (c == ':')
			return cli_usage_error(info, "option '%s' needs a value",
					       argv[optind - 1]);
		if (c >= 256) {
			o = &info->opts[c - 256];
		} else {
			for (o = info->opts; o->type != CLI_OPT_END; o++)
				if (o->shortname == c)
					break;
		}
		if (apply(info, o, optarg))
			return 2;
	}
	*first = optind;
	return 0;
}

/* --by "location,class": one more grouping of o. */
int cli_parse_keys(const struct cli_cmd_info *info, const char *s,
		   hd_stats_options *o)
{
	unsigned g = o->ngroupings, n = 0;

	if (g == HD_STATS_MAX_GROUPINGS)
		return cli_usage_error(info, "at most %d groupings",
				       HD_STATS_MAX_GROUPINGS);
	while (*s) {
		size_t len = strcspn(s, ",");
		int k = hd_key_from_name(s, len);

		if (!k)
			return cli_usage_error(info, "unknown key '%.*s'",
					       (int)len, s);
		if (n == HD_STATS_MAX_KEYS)
			return cli_usage_error(info, "at most %d keys in one --by",
					       HD_STATS_MAX_KEYS);
		o->keys[g][n++] = k;
		s += len + (s[len] == ',');
	}
	if (!n)
		return cli_usage_error(info, "--by needs at least one key");
	o->nkeys[g] = n;
	o->ngroupings++;
	return 0;
}
