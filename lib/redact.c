/*
 * redact.c - hd_redact(): a dump with its secrets replaced, and
 * hd_redact_unmap(): the names of an analysis of it turned back.
 *
 * One pass: each record the reader yields is made valid JSON
 * (hd_json_repair) and walked member by member; every string is kept
 * only when its member says what it is and it looks like that (an
 * address, a type, a root category...), or when the user did not ask for
 * its kind to go (paths, names, classes). Everything else is replaced:
 *  - string contents (a STRING's value, a hash key of a reference name,
 *    any string of an unknown member) by a placeholder of the same byte
 *    length from a keyed hash, so that `strings` and `waste` group the
 *    same copies: the same content always gets the same placeholder,
 *    and contents of up to 8 bytes (where a hash truncated to a few
 *    characters would collide) get distinct ones through a table;
 *  - names (paths, classes, methods, symbols, reference names) by a
 *    token "X_" and 16 hex digits of the keyed hash, which the map file
 *    turns back (hd_redact_unmap);
 *  - generations (and memprof times) shifted by an offset drawn from the
 *    key, so that their order and differences stay.
 * Lines that yield no record are dropped, salvaged ones rebuilt from the
 * fields the reader recovered (addresses, type, sizes: no string).
 */
#include "hd_int.h"
#include "util/json_out.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAP_MAGIC "# heapdump redaction map 1"
#define SHORT_MAX 8   /* values up to this many bytes go through the table */
#define MAX_DEPTH 32

static const char ALPHA[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* ===================================================================== */
/* Ruby's core classes and modules (kept by HD_REDACT_CLASSES)            */
/* ===================================================================== */

static const char *const core_classes[] = {
	"ArgumentError", "Array", "BasicObject", "Binding", "Class",
	"ClosedQueueError", "Comparable", "Complex", "Data", "Dir",
	"EOFError", "Encoding", "Encoding::CompatibilityError",
	"Encoding::Converter", "Encoding::ConverterNotFoundError",
	"Encoding::InvalidByteSequenceError",
	"Encoding::UndefinedConversionError", "EncodingError", "Enumerable",
	"Enumerator", "Enumerator::ArithmeticSequence", "Enumerator::Chain",
	"Enumerator::Generator", "Enumerator::Lazy", "Enumerator::Producer",
	"Enumerator::Product", "Enumerator::Yielder", "Errno", "Exception",
	"FalseClass", "Fiber", "FiberError", "File", "File::Constants",
	"File::Stat", "FileTest", "Float", "FloatDomainError", "FrozenError",
	"GC", "GC::Profiler", "Hash", "IO", "IO::Buffer",
	"IO::Buffer::AccessError", "IO::Buffer::AllocationError",
	"IO::Buffer::InvalidatedError", "IO::Buffer::LockedError",
	"IO::Buffer::MaskError", "IO::EAGAINWaitReadable",
	"IO::EAGAINWaitWritable", "IO::EINPROGRESSWaitReadable",
	"IO::EINPROGRESSWaitWritable", "IO::TimeoutError",
	"IO::WaitReadable", "IO::WaitWritable", "IOError", "IndexError",
	"Integer", "Interrupt", "Kernel", "KeyError", "LoadError",
	"LocalJumpError", "Marshal", "MatchData", "Math",
	"Math::DomainError", "Method", "Module", "NameError",
	"NameError::message", "NilClass", "NoMatchingPatternError",
	"NoMatchingPatternKeyError", "NoMemoryError", "NoMethodError",
	"NotImplementedError", "Numeric", "Object", "ObjectSpace",
	"ObjectSpace::WeakKeyMap", "ObjectSpace::WeakMap", "Pathname",
	"Proc", "Process", "Process::GID", "Process::Status", "Process::Sys",
	"Process::Tms", "Process::UID", "Process::Waiter", "Ractor",
	"Ractor::ClosedError", "Ractor::Error", "Ractor::IsolationError",
	"Ractor::MovedError", "Ractor::MovedObject", "Ractor::Port",
	"Ractor::RemoteError", "Ractor::UnsafeError", "Random",
	"Random::Base", "Random::Formatter", "Range", "RangeError",
	"Rational", "Refinement", "Regexp", "Regexp::TimeoutError",
	"RegexpError", "Ruby", "Ruby::Box", "Ruby::Box::Entry",
	"Ruby::Box::Loader", "RubyVM", "RubyVM::AbstractSyntaxTree",
	"RubyVM::AbstractSyntaxTree::Location",
	"RubyVM::AbstractSyntaxTree::Node", "RubyVM::InstructionSequence",
	"RubyVM::MJIT", "RubyVM::RJIT", "RubyVM::YJIT", "RubyVM::ZJIT",
	"RuntimeError", "ScriptError", "SecurityError", "Set",
	"Set::CoreSet", "Signal", "SignalException", "StandardError",
	"StopIteration", "String", "Struct", "Symbol", "SyntaxError",
	"SystemCallError", "SystemExit", "SystemStackError", "Thread",
	"Thread::Backtrace", "Thread::Backtrace::Location",
	"Thread::ConditionVariable", "Thread::Mutex", "Thread::Queue",
	"Thread::SizedQueue", "ThreadError", "ThreadGroup", "Time",
	"Time::tm", "TracePoint", "TrueClass", "TypeError", "UnboundMethod",
	"UncaughtThrowError", "UnicodeNormalize", "Warning",
	"Warning::buffer", "ZeroDivisionError",
};

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int hd_redact_core_class(const char *name, size_t len)
{
	char buf[64];
	const char *k = buf;

	if (len >= 7 && !memcmp(name, "Errno::", 7))
		return 1;
	if (len >= sizeof(buf) || memchr(name, 0, len))
		return 0;
	memcpy(buf, name, len);
	buf[len] = 0;
	return bsearch(&k, core_classes,
		       sizeof(core_classes) / sizeof(core_classes[0]),
		       sizeof(core_classes[0]), cmp_name) != NULL;
}

/* ===================================================================== */
/* The job                                                               */
/* ===================================================================== */

/* What a string or number is, from its member. */
enum cat {
	C_OTHER,   /* unknown: replaced unless an address */
	C_TOKEN,   /* type, root, struct...: kept when it looks like one */
	C_ADDR,    /* an address: kept when it looks like one */
	C_VALUE,   /* string content */
	C_PATH,
	C_CLASS,   /* a class name */
	C_CLASSREF, /* "class": an address, or a name (replace-class) */
	C_METHOD,
	C_SYMBOL,
	C_REFNAME,
	C_EDGE,    /* a SHAPE's edge name */
	C_FLOAT,   /* a FLOAT's value */
	C_MPDATA,  /* memprof data: addresses, :symbols, contents */
	C_NAMEKEYS, /* memprof ivars/variables/methods: keys are names */
	C_NAMEKEY, /* one of those keys */
	C_GEN,
	C_TIME,
	C_HOST,    /* a sidecar's host */
	C_DUMPNAME, /* a sidecar's dump: the output's base name */
	C_ISOTIME  /* a sidecar's time, "2026-12-02T03:57:42.062676Z" */
};

struct job {
	hd_redact_options o;
	hd_redact_stats st;
	struct hd__hkey key;
	uint64_t gen_off, time_off;
	/* contents of up to SHORT_MAX bytes and their placeholders */
	struct hd__intern shorts;
	char *short_ph;            /* SHORT_MAX bytes per id */
	size_t short_cap;          /* in ids */
	struct hd__intern used;    /* the short placeholders given */
	/* the map: "K:token" -> original (JSON-escaped) */
	struct hd__intern map_tok, map_orig;
	uint32_t *map_of;          /* map_tok id -> map_orig id */
	size_t map_cap;
	int map_dirty;
	const hd_record *rec;
	int memprof;
	int sidecar;               /* walking the sidecar */
	const char *out_name;      /* the output's base name */
	struct hd__line line;      /* the record being written */
	struct hd__buf fixed;      /* the repaired record */
	char *dec;                 /* a decoded string (from dec + 1) */
	size_t dec_cap;
	char *hb;                  /* what is hashed: a tag, then bytes */
	size_t hb_cap;
	char *esc;                 /* an original, JSON-escaped */
	size_t esc_cap;
	hd_outfile *out;
};

static int put(struct job *j, const void *p, size_t n)
{
	return hd__line_put(p, n, &j->line);
}

static int puts_(struct job *j, const char *s)
{
	return put(j, s, strlen(s));
}

/* A JSON string of s[0..n): quotes, backslashes and control bytes
 * escaped. */
static int put_str(struct job *j, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t i, from = 0;
	int rc = put(j, "\"", 1);
	char u[6] = { '\\', 'u', '0', '0', 0, 0 };

	for (i = 0; !rc && i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		if ((rc = put(j, s + from, i - from)))
			return rc;
		if (c < 0x20) {
			u[4] = hex[c >> 4];
			u[5] = hex[c & 15];
			rc = put(j, u, 6);
			from = i + 1;
		} else {
			rc = put(j, "\\", 1);
			from = i;
		}
	}
	if (!rc)
		rc = put(j, s + from, n - from);
	return rc ? rc : put(j, "\"", 1);
}

/* The keyed hash of tag and s[0..n) (copied after the tag into j->hb). */
static uint64_t hash_tag(struct job *j, char tag, const char *s, size_t n,
			 int *oom)
{
	char *b;

	if (hd__grow((void **)&j->hb, &j->hb_cap, n + 1, 1)) {
		*oom = 1;
		return 0;
	}
	b = j->hb;
	memcpy(b + 1, s, n);
	b[0] = tag;
	return hd__hash_keyed(&j->key, b, n + 1);
}

/* n placeholder characters from seed. */
static void expand(const struct job *j, uint64_t seed, char *dst, size_t n)
{
	uint64_t blk[2] = { seed, 0 }, h;
	size_t i = 0;
	int b;

	while (i < n) {
		h = hd__hash_keyed(&j->key, blk, sizeof(blk));
		blk[1]++;
		for (b = 0; b < 10 && i < n; b++, h >>= 6)
			dst[i++] = ALPHA[h & 63];
	}
}

/* ===================================================================== */
/* The map                                                               */
/* ===================================================================== */

/* JSON string content of s[0..n): every byte below 0x20, quote,
 * backslash and byte of 0x80 and above escaped, into j->esc. */
static int escape(struct job *j, const char *s, size_t n, size_t *len)
{
	static const char hex[] = "0123456789abcdef";
	size_t i, k = 0;

	if (hd__grow((void **)&j->esc, &j->esc_cap, n * 6 + 1, 1))
		return HD_ENOMEM;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\') {
			j->esc[k++] = '\\';
			j->esc[k++] = (char)c;
		} else if (c < 0x20 || c >= 0x7f) {
			memcpy(j->esc + k, "\\u00", 4);
			j->esc[k + 4] = hex[c >> 4];
			j->esc[k + 5] = hex[c & 15];
			k += 6;
		} else {
			j->esc[k++] = (char)c;
		}
	}
	*len = k;
	return 0;
}

/* Adds "kind:token" -> original (raw bytes) to the map, once. */
static int map_add_esc(struct job *j, char kind, const char *tok,
		       size_t tlen, const char *esc, size_t elen)
{
	char k[80];
	uint32_t id, oid;
	size_t before = j->map_tok.count;

	if (tlen + 2 > sizeof(k))
		return 0;
	k[0] = kind;
	k[1] = ':';
	memcpy(k + 2, tok, tlen);
	if (hd__intern_put(&j->map_tok, k, tlen + 2, &id))
		return HD_ENOMEM;
	if (j->map_tok.count == before)
		return 0;
	if (hd__intern_put(&j->map_orig, esc, elen, &oid) ||
	    hd__grow((void **)&j->map_of, &j->map_cap, id + 1,
		     sizeof(*j->map_of)))
		return HD_ENOMEM;
	j->map_of[id] = oid;
	j->map_dirty = 1;
	return 0;
}

static int map_add(struct job *j, char kind, const char *tok, size_t tlen,
		   const char *orig, size_t olen)
{
	size_t elen;

	if (!j->o.map_path)
		return 0;
	if (escape(j, orig, olen, &elen))
		return HD_ENOMEM;
	return map_add_esc(j, kind, tok, tlen, j->esc, elen);
}

/* One line of a map file: "K<TAB>token<TAB>original". */
static int map_line(struct job *j, char *s, size_t n)
{
	char *t1 = memchr(s, '\t', n), *t2;

	if (n >= 4 && !memcmp(s, "key ", 4)) {
		unsigned long long a, b;

		if (sscanf(s + 4, "%16llx%16llx", &a, &b) != 2)
			return HD_EPARSE;
		j->key.k0 = a;
		j->key.k1 = b;
		return 1;
	}
	if (!t1 || t1 != s + 1)
		return HD_EPARSE;
	t2 = memchr(t1 + 1, '\t', (size_t)(s + n - t1 - 1));
	if (!t2)
		return HD_EPARSE;
	return map_add_esc(j, s[0], t1 + 1, (size_t)(t2 - t1 - 1), t2 + 1,
			   (size_t)(s + n - t2 - 1));
}

/* Reads an existing map: its key and its entries. *found: 1 if it was. */
static int map_read(struct job *j, const char *path, int *found,
		    hd_error *err)
{
	FILE *f;
	char *ln = NULL;
	size_t cap = 0;
	ssize_t n;
	int rc = 0, have_key = 0, first = 1;
	struct stat sb;

	*found = 0;
	if (lstat(path, &sb) != 0) {
		if (errno == ENOENT)
			return 0;
		return hd__error_sys(err, errno, "cannot open '%s': %s", path,
				     strerror(errno));
	}
	if (S_ISLNK(sb.st_mode))
		return hd__error(err, HD_EINVAL,
				 "'%s' is a symbolic link: a map is never "
				 "written through one", path);
	if (!S_ISREG(sb.st_mode))
		return hd__error(err, HD_EINVAL,
				 "'%s' is not a regular file: not a redaction map",
				 path);
	if (!(f = fopen(path, "re")))
		return hd__error_sys(err, errno, "cannot open '%s': %s", path,
				     strerror(errno));
	while ((n = getline(&ln, &cap, f)) > 0) {
		if (ln[n - 1] == '\n')
			ln[--n] = 0;
		if (first) {
			first = 0;
			if (strcmp(ln, MAP_MAGIC) != 0) {
				rc = HD_EPARSE;
				break;
			}
			continue;
		}
		if ((rc = map_line(j, ln, (size_t)n)) < 0 || rc == HD_ENOMEM ||
		    rc == HD_EPARSE)
			break;
		if (rc == 1)
			have_key = 1;
		rc = 0;
	}
	free(ln);
	fclose(f);
	if (rc == HD_ENOMEM)
		return hd__error(err, HD_ENOMEM, "out of memory");
	if (rc || !have_key)
		return hd__error(err, HD_EINVAL,
				 "'%s' is not a redaction map (heapdump "
				 "redact --map writes one)", path);
	*found = 1;
	return 0;
}

static int map_write(struct job *j, hd_error *err)
{
	hd_outfile *o = NULL;
	char head[128];
	size_t i, tl, ol;
	const char *t, *s;
	int rc, n;

	n = snprintf(head, sizeof(head), MAP_MAGIC "\nkey %016llx%016llx\n",
		     (unsigned long long)j->key.k0,
		     (unsigned long long)j->key.k1);
	if ((rc = hd_outfile_open(&o, j->o.map_path, NULL, 0, err)) ||
	    (rc = hd_outfile_write(o, head, (size_t)n, err)))
		goto out;
	for (i = 0; i < j->map_tok.count; i++) {
		t = hd__intern_str(&j->map_tok, (uint32_t)i, &tl);
		s = hd__intern_str(&j->map_orig, j->map_of[i], &ol);
		if ((rc = hd_outfile_write(o, t, 1, err)) ||
		    (rc = hd_outfile_write(o, "\t", 1, err)) ||
		    (rc = hd_outfile_write(o, t + 2, tl - 2, err)) ||
		    (rc = hd_outfile_write(o, "\t", 1, err)) ||
		    (rc = hd_outfile_write(o, s, ol, err)) ||
		    (rc = hd_outfile_write(o, "\n", 1, err)))
			goto out;
	}
	rc = hd_outfile_commit(o, err);
out:
	hd_outfile_free(o);
	return rc;
}

/* ===================================================================== */
/* Placeholders                                                          */
/* ===================================================================== */

/* Printable ASCII but quote and backslash. */
static int is_key_text(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i] < 0x20 || s[i] > 0x7e || s[i] == '"' || s[i] == '\\')
			return 0;
	return 1;
}

/* Takes dst[0..n) as a placeholder if no content has it yet: 1 if
 * taken, 0 if not, -1 out of memory. */
static int take(struct job *j, const char *dst, size_t n)
{
	uint32_t uid;
	size_t before = j->used.count;

	if (hd__intern_put(&j->used, dst, n, &uid))
		return -1;
	return j->used.count != before;
}

/*
 * A free placeholder of n <= SHORT_MAX bytes for a content of hash seed,
 * into dst: one of the alphabet's, seed's first, else the next seeds';
 * for n <= 2, where the alphabet has fewer placeholders than 7-bit
 * contents (dump_all writes only those), the first free one of every
 * 7-bit string of n bytes (JSON-escaped where it must be). 1, or 0 when
 * none is free (dst then holds a taken one), -1 out of memory.
 */
static int short_free(struct job *j, uint64_t seed, char *dst, size_t n)
{
	unsigned t, i, k, pass, space = n == 1 ? 128 : 128 * 128;
	int rc;

	for (t = 0; t < 64; t++) {
		expand(j, seed + t, dst, n);
		if ((rc = take(j, dst, n)))
			return rc;
	}
	if (n > 2)
		return 0;
	/* printable ones first (hash keys of reference names are) */
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < space; i++) {
			k = (unsigned)((seed + i) % space);
			dst[0] = (char)(k & 127);
			if (n == 2)
				dst[1] = (char)(k >> 7);
			if (!pass && !is_key_text(dst, n))
				continue;
			if ((rc = take(j, dst, n)))
				return rc;
		}
	return 0;
}

/* Writes the placeholder of content s[0..n) (s may be j->dec + 1) into
 * dst[0..n). */
static int value_ph(struct job *j, const char *s, size_t n, char *dst)
{
	uint64_t seed;
	uint32_t id;
	size_t before;
	int oom = 0, rc;

	if (n > SHORT_MAX) {
		seed = hash_tag(j, 'v', s, n, &oom);
		if (oom)
			return HD_ENOMEM;
		expand(j, seed, dst, n);
		return 0;
	}
	before = j->shorts.count;
	if (hd__intern_put(&j->shorts, s, n, &id))
		return HD_ENOMEM;
	if (j->shorts.count == before) {
		memcpy(dst, j->short_ph + (size_t)id * SHORT_MAX, n);
		return 0;
	}
	if (hd__grow((void **)&j->short_ph, &j->short_cap, (size_t)id + 1,
		     SHORT_MAX))
		return HD_ENOMEM;
	seed = hash_tag(j, 'v', s, n, &oom);
	if (oom)
		return HD_ENOMEM;
	rc = short_free(j, seed, dst, n);
	if (rc < 0)
		return HD_ENOMEM;
	if (rc == 0)
		j->st.shared++; /* more contents of n bytes than placeholders */
	memcpy(j->short_ph + (size_t)id * SHORT_MAX, dst, n);
	return 0;
}

/* "X_" and 16 hex digits of the keyed hash of the name s[0..n). */
static int name_tok(struct job *j, char kind, const char *s, size_t n,
		    char tok[19])
{
	int oom = 0;
	uint64_t h = hash_tag(j, kind, s, n, &oom);

	if (oom)
		return HD_ENOMEM;
	snprintf(tok, 19, "%c_%016llx", kind, (unsigned long long)h);
	return 0;
}

/* Writes the token of name s (original orig[0..olen) for the map). */
static int put_name(struct job *j, char kind, const char *pre,
		    const char *s, size_t n, const char *post)
{
	char tok[19];
	int rc;

	if ((rc = name_tok(j, kind, s, n, tok)) ||
	    (rc = map_add(j, kind, tok, 18, s, n)) || (rc = puts_(j, pre)) ||
	    (rc = puts_(j, tok)))
		return rc;
	return puts_(j, post);
}

/* ===================================================================== */
/* Strings                                                               */
/* ===================================================================== */

static int is_addr(const char *s, size_t n)
{
	size_t i = 0;

	if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		i = 2;
	if (n == i || n - i > 16)
		return 0;
	for (; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		      (s[i] >= 'a' && s[i] <= 'f') ||
		      (s[i] >= 'A' && s[i] <= 'F')))
			return 0;
	return 1;
}

/* A type, a root category, a C struct, an encoding: printable ASCII,
 * short, no quote or backslash. */
static int is_token(const char *s, size_t n)
{
	size_t i;

	if (n > 64)
		return 0;
	for (i = 0; i < n; i++)
		if (s[i] < 0x20 || s[i] > 0x7e || s[i] == '"' || s[i] == '\\')
			return 0;
	return 1;
}

static int is_float(const char *s, size_t n)
{
	size_t i;

	if (!n || n > 32)
		return 0;
	for (i = 0; i < n; i++)
		if (!strchr("0123456789+-.eEInfinityNa", s[i]))
			return 0;
	return 1;
}

static int is_digits(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return 0;
	return n > 0;
}

static int kept_class(const struct job *j, const char *s, size_t n)
{
	size_t i;

	if (hd_redact_core_class(s, n))
		return 1;
	for (i = 0; i < j->o.nkeep_classes; i++)
		if (strlen(j->o.keep_classes[i]) == n &&
		    !memcmp(j->o.keep_classes[i], s, n))
			return 1;
	return 0;
}

/* The placeholder of a content, as a JSON string. */
static int put_value(struct job *j, const char *s, size_t n)
{
	char *ph = hd__malloc(n ? n : 1);
	int rc;

	if (!ph)
		return HD_ENOMEM;
	rc = value_ph(j, s, n, ph);
	if (!rc)
		rc = put_str(j, ph, n);
	hd__free(ph, n ? n : 1);
	return rc;
}

/* A reference name (decoded s[0..n)), as a JSON string. */
static int put_refname(struct job *j, const char *s, size_t n)
{
	int names = (j->o.flags & HD_REDACT_NAMES) != 0, rc;

	/* ["key"]: a String key, its content */
	if (n >= 4 && s[0] == '[' && s[1] == '"' && s[n - 2] == '"' &&
	    s[n - 1] == ']') {
		char *ph = hd__malloc(n);

		if (!ph)
			return HD_ENOMEM;
		ph[0] = '[';
		ph[1] = '"';
		rc = value_ph(j, s + 2, n - 4, ph + 2);
		ph[n - 2] = '"';
		ph[n - 1] = ']';
		if (!rc)
			rc = map_add(j, 'k', ph + 2, n - 4, s + 2, n - 4);
		if (!rc)
			rc = put_str(j, ph, n);
		hd__free(ph, n);
		j->st.keys++;
		return rc;
	}
	if (!names || (n >= 2 && s[0] == '(' && s[n - 1] == ')') ||
	    (n == 5 && !memcmp(s, "[key]", 5)) ||
	    (n == 7 && !memcmp(s, "[value]", 7)) ||
	    (n >= 3 && s[0] == '[' && s[n - 1] == ']' &&
	     is_digits(s + 1, n - 2)))
		return put_str(j, s, n);
	j->st.names++;
	if (n >= 4 && !memcmp(s, "[:", 2) && s[n - 1] == ']')
		return put_name(j, 's', "\"[:", s + 2, n - 3, "]\"");
	if (n > 9 && !memcmp(s, "thread[:", 8) && s[n - 1] == ']')
		return put_name(j, 's', "\"thread[:", s + 8, n - 9, "]\"");
	if (n > 18 && !memcmp(s, "thread_variable[:", 17) && s[n - 1] == ']')
		return put_name(j, 's', "\"thread_variable[:", s + 17, n - 18,
				"]\"");
	if (s[0] == '@')
		return put_name(j, 'i', "\"@", s + 1, n - 1, "\"");
	if (n > 2 && !memcmp(s, "::", 2))
		return put_name(j, 'K', "\"::", s + 2, n - 2, "\"");
	if (s[0] == '$')
		return put_name(j, 'g', "\"$", s + 1, n - 1, "\"");
	if (s[0] == '.')
		return put_name(j, 'f', "\".", s + 1, n - 1, "\"");
	return put_name(j, 'l', "\"", s, n, "\"");
}

/* A sidecar's time: with HD_REDACT_TIMES shifted by an offset drawn
 * from the key (under ten years: the dumps of one map keep their order
 * and intervals), else kept; anything that is no time is replaced. */
static int put_isotime(struct job *j, const char *s, size_t n)
{
	struct tm tm;
	char buf[64];
	int y, mo, d, h, mi, se, k;
	time_t t;

	if (n < 20 || n > 40 || !is_token(s, n) ||
	    sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d", &y, &mo, &d, &h, &mi, &se) != 6)
		return put_value(j, s, n);
	if (!(j->o.flags & HD_REDACT_TIMES))
		return put_str(j, s, n);
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = se;
	t = timegm(&tm) + (time_t)(j->time_off % (3650ull * 86400));
	if (!gmtime_r(&t, &tm))
		return put_value(j, s, n);
	k = (int)strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
	if (k != 19 || (size_t)k + (n - 19) >= sizeof(buf))
		return put_value(j, s, n);
	memcpy(buf + 19, s + 19, n - 19); /* the fraction and the zone */
	j->st.times++;
	return put_str(j, buf, n);
}

/* One string of category c: raw is its JSON body (valid JSON). */
static int put_string(struct job *j, enum cat c, const char *raw,
		      size_t rawlen)
{
	char *d;
	size_t n;
	unsigned fl = j->o.flags;

	if (hd__grow((void **)&j->dec, &j->dec_cap, rawlen + 2, 1))
		return HD_ENOMEM;
	d = j->dec + 1;
	n = hd_json_unescape(d, raw, rawlen);
	switch (c) {
	case C_TOKEN:
		if (is_token(d, n))
			goto keep;
		break;
	case C_ADDR:
	case C_OTHER:
		if (is_addr(d, n))
			goto keep;
		break;
	case C_CLASSREF:
		if (is_addr(d, n))
			goto keep;
		/* fall through */
	case C_CLASS:
		if (!(fl & HD_REDACT_CLASSES) || kept_class(j, d, n))
			goto keep;
		j->st.classes++;
		return put_name(j, 'C', "\"", d, n, "\"");
	case C_PATH:
		if (!(fl & HD_REDACT_PATHS))
			goto keep;
		j->st.paths++;
		/* the file that marks dump_all's own objects (names.c's
		 * hd__is_dumper_object) keeps its base name */
		if ((n >= 12 && !memcmp(d + n - 12, "/objspace.rb", 12)) ||
		    (n == 11 && !memcmp(d, "objspace.rb", 11)))
			return put_name(j, 'p', "\"redacted/", d, n,
					"/objspace.rb\"");
		return put_name(j, 'p', "\"redacted/", d, n, ".rb\"");
	case C_METHOD:
		/* and the methods that mark them */
		if (!(fl & HD_REDACT_NAMES) ||
		    (n == 8 && !memcmp(d, "dump_all", 8)) ||
		    (n == 9 && !memcmp(d, "_dump_all", 9)))
			goto keep;
		j->st.names++;
		return put_name(j, 'm', "\"", d, n, "\"");
	case C_SYMBOL:
		if (!(fl & HD_REDACT_NAMES))
			goto keep;
		j->st.names++;
		return put_name(j, 's', "\"", d, n, "\"");
	case C_EDGE:
		if (!(fl & HD_REDACT_NAMES))
			goto keep;
		j->st.names++;
		if (n && d[0] == '@')
			return put_name(j, 'i', "\"@", d + 1, n - 1, "\"");
		return put_name(j, 'l', "\"", d, n, "\"");
	case C_REFNAME:
		return put_refname(j, d, n);
	case C_FLOAT:
		if (is_float(d, n))
			goto keep;
		break;
	case C_MPDATA:
		if (is_addr(d, n))
			goto keep;
		if (n && d[0] == ':') {
			if (!(fl & HD_REDACT_NAMES))
				goto keep;
			j->st.names++;
			return put_name(j, 's', "\":", d + 1, n - 1, "\"");
		}
		j->st.values++;
		return put_value(j, d, n);
	case C_NAMEKEY:
		if (!(fl & HD_REDACT_NAMES) || !n)
			goto keep;
		j->st.names++;
		if (d[0] == '@')
			return put_name(j, 'i', "\"@", d + 1, n - 1, "\"");
		if (n > 2 && d[0] == ':' && d[1] == '$')
			return put_name(j, 'g', "\":$", d + 2, n - 2, "\"");
		if (d[0] == ':')
			return put_name(j, 's', "\":", d + 1, n - 1, "\"");
		return put_name(j, 'm', "\"", d, n, "\"");
	case C_VALUE:
		j->st.values++;
		return put_value(j, d, n);
	case C_HOST:
		return put_str(j, "redacted", 8);
	case C_DUMPNAME:
		return put_str(j, j->out_name, strlen(j->out_name));
	case C_ISOTIME:
		return put_isotime(j, d, n);
	default:
		break;
	}
	j->st.other++;
	return put_value(j, d, n);
keep:
	if (put(j, "\"", 1) || put(j, raw, rawlen) || put(j, "\"", 1))
		return HD_ENOMEM;
	return 0;
}

/* ===================================================================== */
/* The JSON walk (over valid JSON: hd_json_repair's output)              */
/* ===================================================================== */

struct cur {
	const char *p, *end;
};

static void ws(struct cur *c)
{
	while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' ||
				 *c->p == '\r' || *c->p == '\n'))
		c->p++;
}

/* At a '"': the body, c past the closing quote. */
static int str_body(struct cur *c, const char **b, size_t *n)
{
	const char *p = c->p + 1;

	if (c->p >= c->end || *c->p != '"')
		return HD_EPARSE;
	*b = p;
	while (p < c->end && *p != '"') {
		if (*p == '\\')
			p++;
		p++;
	}
	if (p >= c->end)
		return HD_EPARSE;
	*n = (size_t)(p - *b);
	c->p = p + 1;
	return 0;
}

static int cat_eq(const char *k, size_t n, const char *lit)
{
	return strlen(lit) == n && !memcmp(k, lit, n);
}

/* The category of a sidecar's top-level member (its numbers are the
 * process's sizes and GC counts: kept). */
static enum cat sidecar_cat(const char *k, size_t n)
{
	if (cat_eq(k, n, "ruby_version") || cat_eq(k, n, "ruby_platform") ||
	    cat_eq(k, n, "ruby_description") || cat_eq(k, n, "dumper"))
		return C_TOKEN;
	if (cat_eq(k, n, "host"))
		return C_HOST;
	if (cat_eq(k, n, "dump"))
		return C_DUMPNAME;
	if (cat_eq(k, n, "time"))
		return C_ISOTIME;
	return C_OTHER;
}

/* The category of a top-level member's value. */
static enum cat member_cat(const struct job *j, const char *k, size_t n)
{
	int type;

	if (j->sidecar)
		return sidecar_cat(k, n);
	type = j->rec->type;

	if (cat_eq(k, n, "address") || cat_eq(k, n, "class_address") ||
	    cat_eq(k, n, "superclass") || cat_eq(k, n, "default") ||
	    cat_eq(k, n, "references") || cat_eq(k, n, "super") ||
	    cat_eq(k, n, "last_class") || cat_eq(k, n, "self") ||
	    cat_eq(k, n, "node") || cat_eq(k, n, "prev") ||
	    cat_eq(k, n, "receiver_class"))
		return C_ADDR;
	if (cat_eq(k, n, "type") || cat_eq(k, n, "root") ||
	    cat_eq(k, n, "struct") || cat_eq(k, n, "imemo_type") ||
	    cat_eq(k, n, "node_type") || cat_eq(k, n, "encoding") ||
	    cat_eq(k, n, "shape_type") || cat_eq(k, n, "ruby_version") ||
	    cat_eq(k, n, "_id") || cat_eq(k, n, "mode") ||
	    cat_eq(k, n, "coderange"))
		return C_TOKEN;
	if (cat_eq(k, n, "class"))
		return C_CLASSREF;
	if (cat_eq(k, n, "value"))
		return type == HD_T_SYMBOL ? C_SYMBOL :
		       type == HD_T_FLOAT  ? C_FLOAT :
					     C_VALUE;
	if (cat_eq(k, n, "file") || (j->memprof && cat_eq(k, n, "path")))
		return C_PATH;
	if (cat_eq(k, n, "method") || cat_eq(k, n, "orig_func") ||
	    cat_eq(k, n, "last_func") || cat_eq(k, n, "called_id") ||
	    cat_eq(k, n, "mid"))
		return C_METHOD;
	if (cat_eq(k, n, "name") || cat_eq(k, n, "real_class_name") ||
	    cat_eq(k, n, "class_name") || cat_eq(k, n, "super_name"))
		return C_CLASS;
	if (cat_eq(k, n, "ref_names"))
		return C_REFNAME;
	if (cat_eq(k, n, "edge_name"))
		return C_EDGE;
	if (cat_eq(k, n, "generation"))
		return C_GEN;
	if (cat_eq(k, n, "time"))
		return C_TIME;
	if (j->memprof && cat_eq(k, n, "data"))
		return type == HD_T_STRING ? C_VALUE : C_MPDATA;
	if (j->memprof && (cat_eq(k, n, "ivars") || cat_eq(k, n, "variables") ||
			   cat_eq(k, n, "methods")))
		return C_NAMEKEYS;
	return C_OTHER;
}

/* A number, shifted when it is a generation or a time. */
static int put_number(struct job *j, enum cat c, const char *b, size_t n)
{
	char tmp[32];
	unsigned long long v;
	uint64_t off = c == C_GEN ? j->gen_off : j->time_off;
	int k;

	if ((c != C_GEN && c != C_TIME) || !(j->o.flags & HD_REDACT_TIMES) ||
	    !is_digits(b, n) || n > 19)
		return put(j, b, n);
	memcpy(tmp, b, n);
	tmp[n] = 0;
	v = strtoull(tmp, NULL, 10);
	if (v > UINT64_MAX / 2)
		return put(j, b, n); /* "untraced" and out of range: as is */
	k = snprintf(tmp, sizeof(tmp), "%llu", v + (unsigned long long)off);
	j->st.times++;
	return put(j, tmp, (size_t)k);
}

static int walk(struct job *j, struct cur *c, enum cat cat, int depth,
		int top);

static int walk_object(struct job *j, struct cur *c, enum cat cat,
		       int depth, int top)
{
	const char *k;
	size_t kn;
	int rc, first = 1;
	enum cat vc;

	c->p++; /* { */
	if ((rc = put(j, "{", 1)))
		return rc;
	for (;;) {
		ws(c);
		if (c->p < c->end && *c->p == '}')
			break;
		if (!first) {
			if (c->p >= c->end || *c->p != ',')
				return HD_EPARSE;
			c->p++;
			ws(c);
			if ((rc = put(j, ", ", 2)))
				return rc;
		}
		first = 0;
		if ((rc = str_body(c, &k, &kn)))
			return rc;
		/* a key: a member name of Ruby's, or a name (memprof) */
		if (cat == C_NAMEKEYS)
			rc = put_string(j, C_NAMEKEY, k, kn);
		else if (is_token(k, kn)) {
			rc = put(j, "\"", 1) || put(j, k, kn) || put(j, "\"", 1);
		} else {
			rc = put_string(j, C_OTHER, k, kn);
		}
		if (rc)
			return HD_ENOMEM;
		ws(c);
		if (c->p >= c->end || *c->p != ':')
			return HD_EPARSE;
		c->p++;
		if ((rc = put(j, ":", 1)))
			return rc;
		vc = top ? member_cat(j, k, kn) :
		     cat == C_NAMEKEYS ? C_MPDATA :
					 C_OTHER;
		if ((rc = walk(j, c, vc, depth + 1, 0)))
			return rc;
	}
	c->p++;
	return put(j, "}", 1);
}

static int walk_array(struct job *j, struct cur *c, enum cat cat, int depth)
{
	int rc, first = 1;

	c->p++;
	if ((rc = put(j, "[", 1)))
		return rc;
	for (;;) {
		ws(c);
		if (c->p < c->end && *c->p == ']')
			break;
		if (!first) {
			if (c->p >= c->end || *c->p != ',')
				return HD_EPARSE;
			c->p++;
			if ((rc = put(j, ", ", 2)))
				return rc;
		}
		first = 0;
		if ((rc = walk(j, c, cat, depth + 1, 0)))
			return rc;
	}
	c->p++;
	return put(j, "]", 1);
}

static int walk(struct job *j, struct cur *c, enum cat cat, int depth,
		int top)
{
	const char *b;
	size_t n;
	int rc;

	if (depth > MAX_DEPTH)
		return HD_EPARSE;
	ws(c);
	if (c->p >= c->end)
		return HD_EPARSE;
	switch (*c->p) {
	case '{':
		return walk_object(j, c, cat, depth, top);
	case '[':
		return walk_array(j, c, cat, depth);
	case '"':
		if ((rc = str_body(c, &b, &n)))
			return rc;
		return put_string(j, cat, b, n);
	default:
		b = c->p;
		while (c->p < c->end && *c->p != ',' && *c->p != '}' &&
		       *c->p != ']' && *c->p != ' ')
			c->p++;
		n = (size_t)(c->p - b);
		if (!n)
			return HD_EPARSE;
		if (!(cat_eq(b, n, "true") || cat_eq(b, n, "false") ||
		      cat_eq(b, n, "null") || strspn(b, "0123456789+-.eE") >= n))
			return HD_EPARSE;
		return put_number(j, cat, b, n);
	}
}

/* ===================================================================== */
/* Records                                                               */
/* ===================================================================== */

static int put_addr_m(struct job *j, const char *key, uint64_t v)
{
	char tmp[64];
	int n = snprintf(tmp, sizeof(tmp), "%s\"0x%llx\"", key,
			 (unsigned long long)v);

	return put(j, tmp, (size_t)n);
}

static int put_u64_m(struct job *j, const char *key, uint64_t v)
{
	char tmp[64];
	int n = snprintf(tmp, sizeof(tmp), "%s%llu", key,
			 (unsigned long long)v);

	return put(j, tmp, (size_t)n);
}

/* A record rebuilt from the fields the salvage of its line recovered:
 * addresses, type, sizes, no string but a checked type or root. */
static int put_salvaged(struct job *j, const hd_record *rec)
{
	const char *tn = rec->type != HD_T_UNKNOWN ? hd_type_name(rec->type) :
						     NULL;
	size_t i;
	int rc = 0;

	j->line.len = 0;
	j->st.salvaged++;
	if (rec->kind == HD_REC_ROOT) {
		rc = puts_(j, "{\"type\":\"ROOT\", \"root\":") ||
		     put_string(j, C_TOKEN, rec->root.ptr, rec->root.len);
	} else {
		if (!(rec->has & HD_HAS_ADDRESS))
			return 0; /* nothing to say of it */
		rc = put_addr_m(j, "{\"address\":", rec->address) ||
		     puts_(j, ", \"type\":");
		if (!rc && tn)
			rc = put_str(j, tn, strlen(tn));
		else if (!rc)
			rc = put_string(j, C_TOKEN, rec->type_name.ptr,
					rec->type_name.len);
		if (!rc && (rec->has & HD_HAS_CLASS))
			rc = put_addr_m(j, ", \"class\":", rec->class_addr);
		if (!rc && (rec->has & HD_HAS_MEMSIZE))
			rc = put_u64_m(j, ", \"memsize\":", rec->memsize);
		if (!rc && (rec->has & HD_HAS_GENERATION)) {
			char tmp[24];
			int n = snprintf(tmp, sizeof(tmp), "%llu",
					 (unsigned long long)rec->generation);

			rc = puts_(j, ", \"generation\":") ||
			     put_number(j, C_GEN, tmp, (size_t)n);
		}
	}
	if (!rc && rec->nrefs) {
		rc = puts_(j, ", \"references\":[");
		for (i = 0; !rc && i < rec->nrefs; i++)
			rc = put_addr_m(j, i ? ", " : "", rec->refs[i]);
		if (!rc)
			rc = puts_(j, "]");
	}
	if (!rc)
		rc = puts_(j, "}\n");
	if (rc)
		return HD_ENOMEM;
	return 1;
}

/* One record into j->line; 1 when there is a line to write. */
static int redact_record(struct job *j, const hd_record *rec)
{
	size_t n;
	int rc;
	struct cur c;

	j->rec = rec;
	j->memprof = (rec->origin & HD_O_MEMPROF) != 0;
	if (hd__buf_reserve(&j->fixed, rec->text_len + rec->text_len / 8 + 64))
		return HD_ENOMEM;
	rc = hd_json_repair(j->fixed.p, j->fixed.cap, &n, rec->text,
			    rec->text_len, NULL);
	if (!rc && n > j->fixed.cap) {
		if (hd__buf_reserve(&j->fixed, n))
			return HD_ENOMEM;
		rc = hd_json_repair(j->fixed.p, j->fixed.cap, &n, rec->text,
				    rec->text_len, NULL);
	}
	if (rc == HD_ENOMEM)
		return rc;
	if (rc)
		return put_salvaged(j, rec);
	j->line.len = 0;
	c.p = j->fixed.p;
	c.end = j->fixed.p + n;
	ws(&c);
	if (c.p >= c.end || *c.p != '{')
		return put_salvaged(j, rec);
	rc = walk(j, &c, C_OTHER, 0, 1);
	if (rc == HD_ENOMEM)
		return rc;
	if (rc)
		return put_salvaged(j, rec);
	if (put(j, "\n", 1))
		return HD_ENOMEM;
	return 1;
}

static void progress(struct job *j, hd_reader *r)
{
	hd_read_stats rs;

	if (!j->o.progress)
		return;
	hd_reader_stats(&rs, r);
	j->o.progress(rs.bytes, rs.total_bytes, j->o.progress_payload);
}

static int write_records(struct job *j, hd_reader *r, hd_error *err)
{
	const hd_record *rec;
	uint64_t n = 0;
	int rc;

	while ((rc = hd_reader_next(r, &rec, err)) == 0) {
		rc = redact_record(j, rec);
		if (rc == HD_ENOMEM)
			return hd__error(err, rc, "out of memory");
		if (rc == 1) {
			if ((rc = hd_outfile_write(j->out, j->line.p,
						   j->line.len, err)))
				return rc;
			j->st.records++;
		}
		if ((++n & 0xffff) == 0)
			progress(j, r);
	}
	if (rc != HD_ITEROVER)
		return rc;
	hd_reader_stats(&j->st.read, r);
	return 0;
}

static int fresh_key(struct hd__hkey *k, hd_error *err)
{
	uint64_t b[2];

	if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b))
		return hd__error_sys(err, errno,
				     "cannot draw a random key: %s",
				     strerror(errno));
	k->k0 = b[0];
	k->k1 = b[1];
	return 0;
}

static void job_free(struct job *j)
{
	hd_outfile_free(j->out);
	hd__intern_free(&j->shorts);
	hd__intern_free(&j->used);
	hd__intern_free(&j->map_tok);
	hd__intern_free(&j->map_orig);
	hd__free(j->short_ph, j->short_cap * SHORT_MAX);
	HD_FREE(j->map_of, j->map_cap);
	hd__line_free(&j->line);
	hd__free(j->fixed.p, j->fixed.cap);
	hd__free(j->dec, j->dec_cap);
	hd__free(j->hb, j->hb_cap);
	hd__free(j->esc, j->esc_cap);
	hd__free(j, sizeof(*j));
}

static int job_new(struct job **out, hd_error *err)
{
	struct job *j = hd__calloc(1, sizeof(*j));

	*out = j;
	if (!j || hd__intern_init(&j->shorts) || hd__intern_init(&j->used) ||
	    hd__intern_init(&j->map_tok) || hd__intern_init(&j->map_orig))
		return hd__error(err, HD_ENOMEM, "out of memory");
	return 0;
}

/* The sidecar, redacted: read whole (a sidecar is a few KB; 1 MiB at
 * most), walked as a record, written beside the output. */
static int redact_sidecar(struct job *j, const char *out_path, hd_error *err)
{
	FILE *f = fopen(j->o.sidecar_in, "re");
	char *buf = NULL;
	size_t n = 0, cap = 1u << 20;
	hd_outfile *o = NULL;
	struct cur c;
	const char *slash = strrchr(out_path, '/');
	int rc;

	if (!f)
		return hd__error_sys(err, errno, "cannot open '%s': %s",
				     j->o.sidecar_in, strerror(errno));
	if (!(buf = hd__malloc(cap + 1))) {
		fclose(f);
		return hd__error(err, HD_ENOMEM, "out of memory");
	}
	n = fread(buf, 1, cap + 1, f);
	fclose(f);
	if (n > cap) {
		hd__free(buf, cap + 1);
		return hd__error(err, HD_EINVAL, "'%s': a sidecar of more "
				 "than 1 MiB", j->o.sidecar_in);
	}
	j->sidecar = 1;
	j->out_name = slash ? slash + 1 : out_path;
	j->line.len = 0;
	c.p = buf;
	c.end = buf + n;
	ws(&c);
	rc = c.p < c.end && *c.p == '{' ? walk(j, &c, C_OTHER, 0, 1) : HD_EPARSE;
	if (!rc) {
		ws(&c);
		if (c.p != c.end)
			rc = HD_EPARSE;
	}
	hd__free(buf, cap + 1);
	if (rc == HD_ENOMEM)
		return hd__error(err, rc, "out of memory");
	if (rc)
		return hd__error(err, HD_EPARSE, "'%s' is not a sidecar "
				 "(one JSON object)", j->o.sidecar_in);
	if ((rc = put(j, "\n", 1)))
		return hd__error(err, rc, "out of memory");
	if ((rc = hd_outfile_open(&o, j->o.sidecar_out, j->o.sidecar_in, 0,
				  err)) ||
	    (rc = hd_outfile_write(o, j->line.p, j->line.len, err)) ||
	    (rc = hd_outfile_commit(o, err))) {
		hd_outfile_free(o);
		return rc;
	}
	hd_outfile_free(o);
	return 0;
}

int hd_redact(const char *in_path, const char *out_path,
	      const hd_redact_options *opts, hd_error *err)
{
	static const hd_redact_options defaults = HD_REDACT_OPTIONS_INIT;
	struct job *j = NULL;
	hd_reader *r = NULL;
	struct stat in_sb, out_sb;
	int rc, found = 0;
	uint64_t h;

	HD_ASSERT_ARG(in_path && out_path);
	HD_ASSERT_ARG(!opts || opts->version == HD_REDACT_OPTIONS_VERSION);
	HD_ASSERT_ARG(!opts || !(opts->flags & ~(HD_REDACT_PATHS |
						  HD_REDACT_NAMES |
						  HD_REDACT_CLASSES |
						  HD_REDACT_TIMES)));
	if ((rc = job_new(&j, err)))
		goto out;
	j->o = opts ? *opts : defaults;
	if (strcmp(in_path, "-") != 0 && strcmp(out_path, "-") != 0 &&
	    stat(in_path, &in_sb) == 0 && stat(out_path, &out_sb) == 0 &&
	    in_sb.st_dev == out_sb.st_dev && in_sb.st_ino == out_sb.st_ino) {
		rc = hd__error(err, HD_EINVAL, "'%s' is the input dump",
			       out_path);
		goto out;
	}
	if (j->o.map_path) {
		if ((strcmp(in_path, "-") != 0 &&
		     stat(in_path, &in_sb) == 0 &&
		     stat(j->o.map_path, &out_sb) == 0 &&
		     in_sb.st_dev == out_sb.st_dev &&
		     in_sb.st_ino == out_sb.st_ino) ||
		    strcmp(j->o.map_path, out_path) == 0) {
			rc = hd__error(err, HD_EINVAL,
				       "'%s' is the input or the output: the "
				       "map needs a file of its own",
				       j->o.map_path);
			goto out;
		}
		if ((rc = map_read(j, j->o.map_path, &found, err)))
			goto out;
	}
	if (!found && (rc = fresh_key(&j->key, err)))
		goto out;
	h = hd__hash_keyed(&j->key, "generation", 10);
	j->gen_off = 1000 + h % 1000000;
	h = hd__hash_keyed(&j->key, "time", 4);
	j->time_off = h % ((uint64_t)1 << 45);
	if ((rc = hd_reader_open(&r, in_path, &j->o.read, err)) ||
	    (rc = hd_outfile_open(&j->out, out_path,
				  strcmp(in_path, "-") ? in_path : NULL, 0,
				  err)) ||
	    (rc = write_records(j, r, err)) ||
	    (rc = hd_outfile_commit(j->out, err)))
		goto out;
	if (j->o.sidecar_in && j->o.sidecar_out &&
	    (rc = redact_sidecar(j, out_path, err)))
		goto out;
	if (j->o.map_path && (j->map_dirty || !found) &&
	    (rc = map_write(j, err)))
		goto out;
	j->st.mapped = j->map_tok.count;
	if (j->o.stats)
		*j->o.stats = j->st;
out:
	hd_reader_free(r);
	if (j)
		job_free(j);
	return rc;
}

/* ===================================================================== */
/* Unmap                                                                 */
/* ===================================================================== */

static int hexrun(const char *p, const char *end)
{
	int i;

	for (i = 0; i < 16; i++)
		if (p + i >= end || !((p[i] >= '0' && p[i] <= '9') ||
				      (p[i] >= 'a' && p[i] <= 'f')))
			return 0;
	return 1;
}

static int word_ch(char ch)
{
	return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') ||
	       (ch >= 'A' && ch <= 'Z') || ch == '_';
}

/* The original of "kind:tok", or NULL. */
static const char *lookup(struct job *j, char kind, const char *tok,
			  size_t n, size_t *olen)
{
	char k[80];
	uint32_t id;
	size_t before = j->map_tok.count;

	if (n + 2 > sizeof(k))
		return NULL;
	k[0] = kind;
	k[1] = ':';
	memcpy(k + 2, tok, n);
	if (hd__intern_put(&j->map_tok, k, n + 2, &id))
		return NULL;
	if (j->map_tok.count != before) {
		/* not in the map: remembered as such */
		if (hd__grow((void **)&j->map_of, &j->map_cap, (size_t)id + 1,
			     sizeof(*j->map_of)))
			return NULL;
		j->map_of[id] = HD_STR_NONE;
		return NULL;
	}
	if (j->map_of[id] == HD_STR_NONE)
		return NULL;
	return hd__intern_str(&j->map_orig, j->map_of[id], olen);
}

/* One line with its placeholders replaced, into j->line. */
static int unmap_line(struct job *j, const char *s, size_t n, uint64_t *cnt)
{
	const char *p = s, *end = s + n, *from = s, *o;
	size_t ol;

	j->line.len = 0;
	while (p < end) {
		/* X_ and 16 hex digits, a word of its own */
		if (p + 18 <= end && p[1] == '_' && word_ch(p[0]) &&
		    (p == s || !word_ch(p[-1])) && hexrun(p + 2, end) &&
		    (p + 18 == end || !word_ch(p[18])) &&
		    (o = lookup(j, p[0], p, 18, &ol))) {
			const char *a = p, *b = p + 18;

			if (p[0] == 'p' && a - s >= 9 &&
			    !memcmp(a - 9, "redacted/", 9)) {
				if (end - b >= 12 && !memcmp(b, "/objspace.rb", 12)) {
					a -= 9;
					b += 12;
				} else if (end - b >= 3 && !memcmp(b, ".rb", 3)) {
					a -= 9;
					b += 3;
				}
			}
			if (a < from)
				a = from;
			if (put(j, from, (size_t)(a - from)) || put(j, o, ol))
				return HD_ENOMEM;
			(*cnt)++;
			p = from = b;
			continue;
		}
		/* ["key"] or [\"key\"] */
		if (*p == '[' && p + 1 < end) {
			int esc = p + 2 < end && p[1] == '\\' && p[2] == '"';
			const char *b = p + (esc ? 3 : 2), *e = b;

			if (esc || p[1] == '"') {
				while (e < end && e - b < 64 && *e != '"' &&
				       *e != '\\')
					e++;
				if (e < end &&
				    ((!esc && *e == '"' && e + 1 < end &&
				      e[1] == ']') ||
				     (esc && *e == '\\' && e + 2 < end &&
				      e[1] == '"' && e[2] == ']')) &&
				    (o = lookup(j, 'k', b, (size_t)(e - b), &ol))) {
					if (put(j, from, (size_t)(b - from)) ||
					    put(j, o, ol))
						return HD_ENOMEM;
					(*cnt)++;
					p = from = e;
					continue;
				}
			}
		}
		p++;
	}
	return put(j, from, (size_t)(end - from));
}

int hd_redact_unmap(const char *map_path, const char *in_path,
		    const char *out_path, uint64_t *replaced, hd_error *err)
{
	struct job *j = NULL;
	FILE *in = NULL;
	char *ln = NULL;
	size_t cap = 0;
	ssize_t n;
	uint64_t cnt = 0;
	int rc, found = 0;

	HD_ASSERT_ARG(map_path && in_path && out_path);
	if ((rc = job_new(&j, err)) || (rc = map_read(j, map_path, &found, err)))
		goto out;
	if (!found) {
		rc = hd__error_sys(err, ENOENT, "cannot open '%s': %s",
				   map_path, strerror(ENOENT));
		goto out;
	}
	in = strcmp(in_path, "-") == 0 ? stdin : fopen(in_path, "re");
	if (!in) {
		rc = hd__error_sys(err, errno, "cannot open '%s': %s", in_path,
				   strerror(errno));
		goto out;
	}
	if ((rc = hd_outfile_open(&j->out, out_path, NULL, 0, err)))
		goto out;
	while ((n = getline(&ln, &cap, in)) > 0) {
		if (unmap_line(j, ln, (size_t)n, &cnt)) {
			rc = hd__error(err, HD_ENOMEM, "out of memory");
			goto out;
		}
		if ((rc = hd_outfile_write(j->out, j->line.p, j->line.len,
					   err)))
			goto out;
	}
	if (ferror(in)) {
		rc = hd__error_sys(err, errno, "cannot read '%s': %s", in_path,
				   strerror(errno));
		goto out;
	}
	if ((rc = hd_outfile_commit(j->out, err)))
		goto out;
	if (replaced)
		*replaced = cnt;
out:
	free(ln);
	if (in && in != stdin)
		fclose(in);
	if (j)
		job_free(j);
	return rc;
}
