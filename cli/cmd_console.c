/*
 * cmd_console.c - heapdump console: irb with the dumps loaded. Runs a
 * Ruby (--ruby, else $HEAPDUMP_RUBY, else ruby on PATH) on a small boot
 * script that puts the heapdump gem on the load path (the build tree the
 * program sits in: B/ext-VERSION and src/lib, else the installed gem)
 * and hands the inputs to HeapDump::Console (src/lib/heapdump/console.rb),
 * which loads them through the gem's bindings to libheapdump and starts
 * irb with heap (before, after, later) bound. Nothing is analysed here.
 */
#include "cmd.h"
#include "common.h"
#include "opt.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define COMMAND_NAME "console"

static const char *ruby;

static const struct cli_opt opts[] = {
	OPT_STRING(0, "ruby", "RUBY", &ruby,
		   "the Ruby to run irb with (default: $HEAPDUMP_RUBY, else "
		   "ruby on PATH); the gem must be built for it"),
	OPT_END()
};

static const struct cli_cmd_info info = {
	COMMAND_NAME, "[options] DUMP|STORE [MORE...]",
	"Open irb with the heapdump gem's API (HeapDump::Heap) on the inputs:\n"
	"heap is the last one; with two inputs before and after, with three\n"
	"before, after and later; heaps is all of them. A dump is indexed once\n"
	"into a store kept beside it (or in ~/.cache/heapdump). Type help in\n"
	"the console for the API. Standard input that is not a terminal is\n"
	"read as a script.",
	opts
};

/* ARGV: the program's directory, then the inputs. A build tree has
 * B/heapdump beside B/ext-VERSION, and src/lib two levels up. */
static const char boot[] =
	"dir = ARGV.shift\n"
	"ext = File.join(dir, \"ext-#{RUBY_VERSION}\")\n"
	"lib = File.expand_path(\"../src/lib\", dir)\n"
	"if File.exist?(File.join(ext, \"heapdump_ext.so\")) && "
	"File.exist?(File.join(lib, \"heapdump/console.rb\"))\n"
	"  $LOAD_PATH.unshift(ext, lib)\n"
	"end\n"
	"begin\n"
	"  require \"heapdump/console\"\n"
	"rescue LoadError => e\n"
	"  abort \"heapdump console: cannot load the heapdump gem with "
	"#{RbConfig.ruby} (#{e.message}): gem install heapdump, or make ext "
	"RUBIES=#{RbConfig.ruby}\"\n"
	"end\n"
	"exit HeapDump::Console.start(ARGV)\n";

/* the directory of the running program, or "." */
static void self_dir(char *buf, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", buf, size - 1);
	char *slash;

	if (n <= 0) {
		snprintf(buf, size, ".");
		return;
	}
	buf[n] = '\0';
	slash = strrchr(buf, '/');
	if (slash)
		*slash = '\0';
}

int cmd_console(int argc, char **argv)
{
	char dir[PATH_MAX];
	char **av;
	int rc, first, i, n;

	ruby = NULL;
	if ((rc = cli_parse(&info, argc, argv, &first)))
		return rc < 0 ? EXIT_OK : rc;
	n = argc - first;
	if (n < 1)
		return cli_usage_error(&info, "a dump or store to open");
	for (i = first; i < argc; i++)
		if (strcmp(argv[i], "-") == 0)
			return cli_usage_error(&info, "the console reads its "
						      "inputs by name, not '-'");
	if (!ruby)
		ruby = getenv("HEAPDUMP_RUBY");
	if (!ruby || !*ruby)
		ruby = "ruby";
	self_dir(dir, sizeof(dir));
	av = calloc((size_t)n + 6, sizeof(*av));
	if (!av) {
		cli_error("out of memory");
		return EXIT_FAIL;
	}
	av[0] = (char *)ruby;
	av[1] = (char *)"-e";
	av[2] = (char *)boot;
	av[3] = (char *)"--";
	av[4] = dir;
	for (i = 0; i < n; i++)
		av[5 + i] = argv[first + i];
	fflush(stdout);
	execvp(ruby, av);
	{
		char t[PATH_MAX];

		cli_error("console: cannot run '%s': %s (install ruby, or give "
			  "--ruby or HEAPDUMP_RUBY)",
			  cli_text(t, sizeof(t), ruby, strlen(ruby)),
			  strerror(errno));
	}
	free(av);
	return EXIT_FAIL;
}
