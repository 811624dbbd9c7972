/*
 * common.c - messages, input reporting, progress, outputs (through the
 * library's hd_outfile, never an input) and the signal handler.
 */
#include "common.h"
#include "opt.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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

void cli_input_init(struct cli_input *in, const char *path, int strict,
		    int quiet)
{
	memset(in, 0, sizeof(*in));
	in->path = path;
	in->name = strcmp(path, "-") == 0 ? "(stdin)" : path;
	in->strict = strict;
	in->quiet = quiet;
	in->progress = !quiet && isatty(2);
	in->t0 = cli_now();
	cli_input_register(path);
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

/* The spooled copies of standard input and of pipes, removed at exit
 * (diff reads up to three inputs) or by the signal handler. */
#define MAX_SPOOL 3
static hd_spool *spools[MAX_SPOOL];
static int nspool, stdin_spooled;

static void free_spools(void)
{
	int i;

	for (i = 0; i < nspool; i++)
		hd_spool_free(spools[i]);
}

int cli_spool_stdin(struct cli_input *in)
{
	const char *what = "standard input";
	hd_error err = { 0 };
	struct stat sb;
	int rc, src = 0;

	if (strcmp(in->path, "-") == 0) {
		if (stdin_spooled)
			return 0;
	} else if (stat(in->path, &sb) != 0 || S_ISREG(sb.st_mode) ||
		   S_ISDIR(sb.st_mode)) {
		return 0; /* read twice in place (or an error later) */
	} else {
		/* a pipe (named, or <(...)) can be read only once */
		what = in->path;
	}
	if (nspool == MAX_SPOOL) {
		cli_error("at most %d inputs can be pipes", MAX_SPOOL);
		return EXIT_USAGE;
	}
	if (what != in->path)
		stdin_spooled = 1;
	else if ((src = open(in->path, O_RDONLY | O_CLOEXEC)) < 0) {
		cli_error("cannot open '%s': %s", in->path, strerror(errno));
		return EXIT_FAIL;
	}
	rc = hd_spool_new(&spools[nspool], src, what, &err);
	if (src > 0)
		close(src);
	if (rc)
		return cli_lib_error(&err);
	if (!nspool++)
		atexit(free_spools);
	in->path = hd_spool_path(spools[nspool - 1]);
	return 0;
}

/* The dump a store was indexed from is an input too. */
static void register_source(const hd_store *s)
{
	hd_store_info si;

	hd_store_info_get(&si, s);
	if (si.source_path && *si.source_path)
		cli_input_register(si.source_path);
}

int cli_open_store(struct cli_input *in, hd_store **out)
{
	hd_index_options o = cli_input_index_options(in);
	hd_error err = { 0 };
	int rc;

	rc = hd_store_load(out, in->path, &o, &err);
	cli_input_done(in);
	if (rc)
		return cli_lib_error(&err);
	register_source(*out);
	return 0;
}

int cli_store_source(const char *store_path, char **dump_out)
{
	hd_store *s = NULL;
	hd_store_info si;
	hd_error err = { 0 };
	int rc;

	*dump_out = NULL;
	if ((rc = hd_store_open(&s, store_path, &err)))
		return cli_lib_error(&err);
	hd_store_info_get(&si, s);
	cli_input_register(store_path);
	register_source(s);
	if (!si.source_path || !*si.source_path ||
	    strcmp(si.source_path, "-") == 0) {
		cli_error("'%s' was indexed from standard input: its records "
			  "are not on disk", store_path);
		rc = EXIT_FAIL;
	} else if ((rc = hd_store_check_source(s, si.source_path, &err))) {
		rc = cli_lib_error(&err);
	} else if (!(*dump_out = strdup(si.source_path))) {
		cli_error("out of memory");
		rc = EXIT_FAIL;
	}
	hd_store_close(s);
	return rc;
}

/* Every file the command reads: no output may be one of them. */
#define MAX_INPUTS 32
static struct {
	dev_t dev;
	ino_t ino;
	char name[256];
} inputs[MAX_INPUTS];
static int ninputs;

void cli_input_register(const char *path)
{
	struct stat sb;

	/* a terminal or /dev/null as both input and output harms nothing */
	if (!path || strcmp(path, "-") == 0 || ninputs == MAX_INPUTS ||
	    stat(path, &sb) != 0 || S_ISDIR(sb.st_mode) || S_ISCHR(sb.st_mode))
		return;
	inputs[ninputs].dev = sb.st_dev;
	inputs[ninputs].ino = sb.st_ino;
	snprintf(inputs[ninputs].name, sizeof(inputs[0].name), "%s", path);
	ninputs++;
}

int cli_out_check(const char *path)
{
	struct stat sb;
	int i;

	if (!path || strcmp(path, "-") == 0 || stat(path, &sb) != 0)
		return 0;
	for (i = 0; i < ninputs; i++) {
		if (inputs[i].dev != sb.st_dev || inputs[i].ino != sb.st_ino)
			continue;
		if (strcmp(inputs[i].name, path) == 0)
			cli_error("'%s' is the input: choose another output",
				  path);
		else
			cli_error("'%s' is the input '%s': choose another "
				  "output", path, inputs[i].name);
		return EXIT_USAGE;
	}
	return 0;
}

int cli_out_open(struct cli_out *o, const char *path, const char *like)
{
	hd_error err = { 0 };
	int rc;

	memset(o, 0, sizeof(*o));
	if (!path || strcmp(path, "-") == 0) {
		o->f = stdout;
		return 0;
	}
	/* -o naming an input would replace it with the output */
	if ((rc = cli_out_check(path)))
		return rc;
	if (hd_outfile_open(&o->out, path, like, 0, &err) ||
	    !(o->f = hd_outfile_stream(o->out, &err))) {
		cli_out_abort(o);
		return cli_lib_error(&err);
	}
	return 0;
}

int cli_out_commit(struct cli_out *o)
{
	hd_error err = { 0 };
	int rc = 0;

	if (!o->out)
		return 0;
	if (hd_outfile_commit(o->out, &err))
		rc = cli_lib_error(&err);
	cli_out_abort(o);
	return rc;
}

void cli_out_abort(struct cli_out *o)
{
	hd_outfile_free(o->out);
	o->out = NULL;
	o->f = NULL;
}

/* SIGINT, SIGTERM, SIGHUP, SIGPIPE (a reader of standard output that
 * went away): the temporary files go, then the signal does what it
 * would have done (the exit status says which signal). */
static void on_signal(int sig)
{
	hd_outfile_cleanup();
	raise(sig); /* SA_RESETHAND: the default action now */
}

void cli_signals_init(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };
	struct sigaction sa, old;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESETHAND | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		/* an ignored signal (nohup, a background job) stays so */
		if (sigaction(sigs[i], NULL, &old) == 0 &&
		    old.sa_handler != SIG_IGN)
			sigaction(sigs[i], &sa, NULL);
	}
}

const char *cli_human_bytes(uint64_t n, char *buf, size_t size)
{
	static const char *const unit[] = { "B", "KB", "MB", "GB", "TB" };
	double v = (double)n;
	int u = 0;

	while (v >= 1000.0 && u < 4) {
		v /= 1000.0;
		u++;
	}
	if (u == 0)
		snprintf(buf, size, "%llu B", (unsigned long long)n);
	else
		snprintf(buf, size, "%.1f %s", v, unit[u]);
	return buf;
}

const char *cli_commas(uint64_t n, char *buf, size_t size)
{
	char tmp[32];
	int len = snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)n);
	size_t o = 0;
	int i;

	for (i = 0; i < len && o + 2 < size; i++) {
		if (i && (len - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = tmp[i];
	}
	buf[o] = '\0';
	return buf;
}

void cli_json_string(FILE *f, const char *s, size_t n)
{
	size_t i;

	putc('"', f);
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		switch (c) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		case '\t': fputs("\\t", f); break;
		default:
			if (c < 0x20 || c == 0x7f)
				fprintf(f, "\\u%04x", c);
			else
				putc(c, f);
		}
	}
	putc('"', f);
}

/*
 * The length of the escape of the character at s[0..n) (n > 0) into out
 * (at least 7 bytes), and in *used how many input bytes it stands for.
 */
static size_t text_char(const unsigned char *s, size_t n, char *out,
			size_t *used)
{
	unsigned c = s[0];
	size_t len, i;
	unsigned lo = 0x80, hi = 0xbf;

	*used = 1;
	if (c < 0x80) {
		switch (c) {
		case '\t': memcpy(out, "\\t", 2); return 2;
		case '\n': memcpy(out, "\\n", 2); return 2;
		case '\r': memcpy(out, "\\r", 2); return 2;
		default:
			if (c < 0x20 || c == 0x7f)
				return (size_t)snprintf(out, 7, "\\u%04x", c);
			out[0] = (char)c;
			return 1;
		}
	}
	/* UTF-8 (RFC 3629): no overlong forms, surrogates or > U+10FFFF */
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4;
	else
		len = 0;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (len && n >= len && s[1] >= lo && s[1] <= hi) {
		for (i = 2; i < len && s[i] >= 0x80 && s[i] <= 0xbf; i++)
			;
		if (i == len) {
			*used = len;
			if (c == 0xc2 && s[1] <= 0x9f) /* C1 control */
				return (size_t)snprintf(out, 7, "\\u%04x",
							s[1]);
			/* bidi embeddings, overrides (U+202A-U+202E) and
			 * isolates (U+2066-U+2069) reorder what a terminal
			 * shows around them */
			if (c == 0xe2 &&
			    ((s[1] == 0x80 && s[2] >= 0xaa && s[2] <= 0xae) ||
			     (s[1] == 0x81 && s[2] >= 0xa6 && s[2] <= 0xa9)))
				return (size_t)snprintf(out, 7, "\\u%04x",
							0x2000u |
							(s[1] & 0x3fu) << 6 |
							(s[2] & 0x3fu));
			memcpy(out, s, len);
			return len;
		}
	}
	return (size_t)snprintf(out, 7, "\\x%02x", c);
}

void cli_text_string(FILE *f, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, used, len;
	char e[8];

	while (i < n) {
		size_t j = i;

		/* a run of printable ASCII at once */
		while (j < n && p[j] >= 0x20 && p[j] < 0x7f)
			j++;
		if (j > i)
			fwrite(p + i, 1, j - i, f);
		if (j == n)
			break;
		len = text_char(p + j, n - j, e, &used);
		fwrite(e, 1, len, f);
		i = j + used;
	}
}

const char *cli_text(char *buf, size_t size, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, o = 0, used, len;
	char e[8];

	if (!size)
		return buf;
	while (i < n) {
		len = text_char(p + i, n - i, e, &used);
		if (o + len >= size)
			break;
		memcpy(buf + o, e, len);
		o += len;
		i += used;
	}
	buf[o] = '\0';
	return buf;
}

void cli_site_text(FILE *f, const hd_site *site, int with_method)
{
	if (site->file)
		cli_text_string(f, site->file, site->file_len);
	fprintf(f, ":%llu", (unsigned long long)site->line);
	if (with_method && site->method) {
		fputs(" in ", f);
		cli_text_string(f, site->method, site->method_len);
	}
}

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

/* A class or module by its own name, anything else by its class's: the
 * library's one naming rule (hd_store_node_name), as GML and DOT use. */
void cli_node_class_raw(const hd_store *s, hd_node_id id, char *buf,
			size_t size)
{
	hd_store_node_name(buf, size, s, id);
}

/* The same name, control bytes escaped for people (cli_text). */
void cli_node_class(const hd_store *s, hd_node_id id, char *buf,
		    size_t size)
{
	char raw[512];
	size_t len = hd_store_node_name(raw, sizeof(raw), s, id);

	cli_text(buf, size, raw, len < sizeof(raw) ? len : sizeof(raw) - 1);
}

void cli_class_name(const hd_store *s, hd_node_id id, char *buf,
		    size_t size)
{
	char raw[512];
	size_t len = hd_store_class_name(raw, sizeof(raw), s, id);

	cli_text(buf, size, raw, len < sizeof(raw) ? len : sizeof(raw) - 1);
}

void cli_node_json(FILE *f, const hd_store *s, hd_node_id v)
{
	char cls[256];
	hd_site site;

	cli_node_class_raw(s, v, cls, sizeof(cls));
	fprintf(f, "{\"address\":\"0x%llx\",\"type\":\"%s\",\"class\":",
	       (unsigned long long)hd_store_address(s, v),
	       hd_type_name(hd_store_type(s, v)));
	cli_json_string(f, cls, strlen(cls));
	fprintf(f, ",\"memsize\":%llu",
	       (unsigned long long)hd_store_memsize(s, v));
	if (hd_store_site(&site, s, v) == 0 && site.file) {
		fprintf(f, ",\"file\":");
		cli_json_string(f, site.file, site.file_len);
		fprintf(f, ",\"line\":%llu", (unsigned long long)site.line);
		if (site.method) {
			fprintf(f, ",\"method\":");
			cli_json_string(f, site.method, site.method_len);
		}
	}
	fputc('}', f);
}

int cli_type_adds(const hd_store *s, hd_node_id v, const char *cls)
{
	int t = hd_store_type(s, v);
	const char *tn = hd_type_name(t);

	if (t == HD_T_OBJECT || cls[0] == '(' || strncmp(cls, "IMEMO/", 6) == 0 ||
	    strncmp(cls, "DATA/", 5) == 0)
		return 0;
	return strcasecmp(cls, tn) != 0;
}
