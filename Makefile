# heapdump - one non-recursive Makefile. All outputs go to build/.
#   make                 library (static + shared) and the heapdump program
#   make check           every test; last line "N passed, N failed"
#   make SANITIZE=address,undefined check
#                        (SAN_STATIC=0: sanitizer runtimes as shared libraries)
#   make check-valgrind  every test, and every heapdump they run, under valgrind
#   make install PREFIX=/usr/local DESTDIR=
#   make deps            install missing Debian packages (root or sudo)
#   make version         VERSION written into heapdump.h, the gem, the man pages
#   make demo            heapdump stats on a sample dump in data/
#   make bench           benchmarks beside wc -l, simdjson, heapy and jq on
#                        0.1 and 1 GB dumps (generated once), and the store's
#                        (tests/bench/README.md; BENCH_SECTIONS=all: the gem too)
#   make bench-serve     serve on three ~4.5 M-object dumps: first and second
#                        start, RSS, every API call's server time
#   make fuzz            libFuzzer targets (clang)
#   make format-check    what clang-format (.clang-format) would change
#   make GVC=0           without Graphviz: render and leaks --svg say how
#                        to get it (make check still needs it)
#   make MHD=0           without libmicrohttpd: serve says how to get it
#                        (make check still needs it)
#   make ISAL=0          gzip dumps inflated by zlib, not ISA-L's igzip
#   make ext             the Ruby extension (src/) into build/ext-VERSION, by
#                        mkmf, for each Ruby of RUBIES (default: ruby and
#                        /opt/rubies/*/bin/ruby)
-include config.mak

PREFIX ?= /usr/local
bindir ?= $(PREFIX)/bin
libdir ?= $(PREFIX)/lib
includedir ?= $(PREFIX)/include
mandir ?= $(PREFIX)/share/man
pkgconfigdir ?= $(libdir)/pkgconfig

CC ?= cc
B := build
GVC ?= 1
MHD ?= 1
WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	-Wpointer-arith -Wcast-align -Wundef -Wvla -Wwrite-strings -Wformat=2
OPT ?= -O2 -g
BASE_CFLAGS := -std=c99 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE \
	$(OPT) $(WARN) -fPIC -fvisibility=hidden -MMD -MP
ifdef DEVELOPER
BASE_CFLAGS += -Werror
endif
ifdef SANITIZE
BASE_CFLAGS += -fsanitize=$(SANITIZE) -fno-sanitize-recover=$(SANITIZE) \
	-fno-omit-frame-pointer
BASE_CFLAGS += -DHD_NO_MMAP # stores read into the heap, where ASan sees them
SAN_LDFLAGS := -fsanitize=$(SANITIZE)
# GCC's programs (not the shared library) link the sanitizers' runtimes
# into themselves, position-dependent: a start then neither maps and
# relocates libasan and libubsan nor relocates the instrumented globals,
# and LeakSanitizer's exit scan skips libubsan's 6 MB of globals; each
# process of make check started in about half the time (0.18 -> 0.1 s
# on a virtual machine whose page faults are slow). SAN_STATIC=0 links
# them as shared libraries (clang links its runtime statically anyway).
SAN_STATIC ?= $(if $(shell $(CC) --version 2>/dev/null | grep -i 'free software foundation'),1,0)
ifeq ($(SAN_STATIC),1)
SAN_EXE_LDFLAGS := $(if $(findstring address,$(SANITIZE)),-static-libasan) \
	$(if $(findstring undefined,$(SANITIZE)),-static-libubsan) -no-pie
endif
endif
ALL_CFLAGS = $(BASE_CFLAGS) $(CPPFLAGS) $(CFLAGS)
ALL_LDFLAGS = $(SAN_LDFLAGS) $(LDFLAGS)
EXE_LDFLAGS = $(ALL_LDFLAGS) $(SAN_EXE_LDFLAGS)
# SQLite (lib/sql.c: heapdump query), libedit (the query shell) and
# ISA-L's igzip (lib/gz.c: gzip dumps, at about a third of zlib's CPU):
# Debian's libsqlite3-dev, libedit-dev and libisal-dev. None is linked:
# each is loaded by dlopen at its first use (lib/util/dynload.c,
# cli/dynlib.c), by its SONAME read here (soname_of, below), so that
# stats and every other command start without mapping and relocating
# them. A build without their headers stops saying what to install.
# ISAL=0 builds with zlib alone; $(B)/gzzlib/heapdump, for
# tests/cli/gzip.sh, is the program with zlib's inflater.
ISAL ?= 1
ifeq ($(ISAL),0)
ISAL_CFLAGS :=
ISAL_OK :=
else
ISAL_SONAME = $(call soname_of,libisal,isal)
ISAL_CFLAGS = -DHD_HAVE_ISAL=1 -DHD_ISAL_SONAME='"$(ISAL_SONAME)"'
ISAL_OK := $(B)/.isal-ok
endif
SQLITE_SONAME = $(call soname_of,sqlite3,sqlite3)
EDIT_SONAME = $(call soname_of,libedit,edit)
# dlopen: in libc since glibc 2.34, in libdl before
DL_LIBS := -Wl,--push-state,--as-needed -ldl -Wl,--pop-state
LIBS = -lz -lm -lpthread $(DL_LIBS)

ifeq ($(V),1)
Q :=
else
Q := @
endif

# One version, in the file VERSION: heapdump.h's HD_VERSION_* (so
# hd_version() and --version; compiling lib/util/error.c stops when they
# differ), the pkg-config file, the gem (src/lib/heapdump/version.rb, which
# the gemspec reads) and the man pages' .Os. After editing VERSION, make
# version writes it into those files; tests/cli/build.sh checks they agree.
VERSION := $(shell cat VERSION 2>/dev/null)
VERSION_PARTS := $(subst ., ,$(VERSION))

# lib/util/: allocation, errors, hashing, maps, interning, threads, file
# mapping, outputs, dynamic loading, JSON writing: nothing of dumps
# (lib/util/hd_util.h). Its objects are part of libheapdump.a (which the
# program and the tests link) and of libheapdump.so (hidden there).
UTIL_SRC := $(wildcard lib/util/*.c)
LIB_SRC := $(wildcard lib/*.c) $(UTIL_SRC)
LIB_OBJ := $(LIB_SRC:%.c=$(B)/%.o)
CLI_SRC := $(wildcard cli/*.c)
CLI_OBJ := $(CLI_SRC:%.c=$(B)/%.o) $(B)/cli/serve_assets.o
UNIT_SRC := $(wildcard tests/unit/t_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(B)/tests/%)
TOOL_SRC := $(wildcard tests/tools/*.c)
TOOL_BIN := $(TOOL_SRC:tests/tools/%.c=$(B)/tests/%)
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_REPLAY := $(FUZZ_SRC:tests/fuzz/%.c=$(B)/tests/replay_%)

all: $(B)/libheapdump.a $(B)/libheapdump.so $(B)/heapdump

# Rebuild everything when the flags change.
$(B)/.cflags: FORCE
	@mkdir -p $(B)
	@echo '$(CC) $(ALL_CFLAGS) $(EXE_LDFLAGS) GVC=$(GVC) MHD=$(MHD) ISAL=$(ISAL)' | cmp -s - $@ || \
		echo '$(CC) $(ALL_CFLAGS) $(EXE_LDFLAGS) GVC=$(GVC) MHD=$(MHD) ISAL=$(ISAL)' > $@

$(B)/%.o: %.c $(B)/.cflags
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) -Ilib -c -o $@ $<

$(B)/lib/util/error.o: lib/util/error.c VERSION $(B)/.cflags
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) -DHD_BUILT_MAJOR=$(word 1,$(VERSION_PARTS)) \
		-DHD_BUILT_MINOR=$(word 2,$(VERSION_PARTS)) \
		-DHD_BUILT_PATCH=$(word 3,$(VERSION_PARTS)) -Ilib -c -o $@ $<

version:
	@echo '$(VERSION)' | grep -Eqx '[0-9]+\.[0-9]+\.[0-9]+' || \
		{ echo "VERSION: want MAJOR.MINOR.PATCH, not '$(VERSION)'" >&2; exit 1; }
	sed -i -e 's/^#define HD_VERSION_MAJOR .*/#define HD_VERSION_MAJOR $(word 1,$(VERSION_PARTS))/' \
		-e 's/^#define HD_VERSION_MINOR .*/#define HD_VERSION_MINOR $(word 2,$(VERSION_PARTS))/' \
		-e 's/^#define HD_VERSION_PATCH .*/#define HD_VERSION_PATCH $(word 3,$(VERSION_PARTS))/' \
		-e 's/^#define HD_VERSION_STRING .*/#define HD_VERSION_STRING "$(VERSION)"/' lib/heapdump.h
	sed -i -e 's/^\(  VERSION = \)".*"/\1"$(VERSION)"/' src/lib/heapdump/version.rb
	sed -i -e 's/^\.Os heapdump .*/.Os heapdump $(VERSION)/' man/*.[1-8]

$(B)/libheapdump.a: $(LIB_OBJ)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

# The shared library exports the HD_API functions of heapdump.h and
# nothing else: a version script made from the header (lib/exports.awk)
# on top of -fvisibility=hidden; tests/cli/shlib.sh checks both.
$(B)/libheapdump.map: lib/heapdump.h lib/exports.awk
	@mkdir -p $(B)
	$(Q){ echo '{ global:'; awk -f lib/exports.awk lib/heapdump.h | \
		sed 's/.*/	&;/'; echo 'local: *; };'; } > $@

$(B)/libheapdump.so: $(LIB_OBJ) $(B)/libheapdump.map
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared -Wl,-soname,libheapdump.so.0 \
		-Wl,--version-script,$(B)/libheapdump.map $(ALL_LDFLAGS) \
		-o $@ $(LIB_OBJ) $(LIBS)

# libgvc and libmicrohttpd (and the TLS, codec and font libraries they
# need) are not linked: the program loads them by dlopen when a drawing
# or serve needs them (cli/dynlib.c), so that the other commands start
# without mapping and relocating them. soname_of,PKG,NAME is the file
# that loads (the SONAME of the libNAME.so that -lNAME would link).
soname_of = $(shell f="$$(pkg-config --variable=libdir $(1) 2>/dev/null)/lib$(2).so"; \
	[ -e "$$f" ] || f="$$($(CC) -print-file-name=lib$(2).so)"; \
	objdump -p "$$f" 2>/dev/null | sed -n 's/^ *SONAME *//p')
# Graphviz's libgvc draws for render and leaks --svg: only
# cli/graphviz.o includes its headers, and only the program loads it
# (never lib/). GVC=0 builds without it: those two then say how to get it.
ifeq ($(GVC),0)
GVC_CFLAGS := -DHAVE_GVC=0
GVC_OK :=
else
GVC_SONAME = $(call soname_of,libgvc,gvc)
GVC_CFLAGS = -DHAVE_GVC=1 -DHD_GVC_SONAME='"$(GVC_SONAME)"' \
	$(patsubst -I%,-isystem %,$(shell pkg-config --cflags libgvc 2>/dev/null))
GVC_OK := $(B)/.gvc-ok
endif

$(B)/.gvc-ok:
	@mkdir -p $(B)
	@pkg-config --exists libgvc || { echo "heapdump: pkg-config cannot find libgvc: install libgraphviz-dev (make deps), or build without drawings: make GVC=0" >&2; exit 1; }
	@test -n '$(GVC_SONAME)' || { echo "heapdump: cannot read the SONAME of libgvc.so (objdump -p, from binutils): install libgraphviz-dev and binutils (make deps)" >&2; exit 1; }
	@touch $@

# (asked when the rule runs, so that make -n shows no pkg-config here)
$(B)/.sql-ok:
	@mkdir -p $(B)
	@test "$(shell pkg-config --exists sqlite3 && echo yes)" = yes || { echo "heapdump: SQLite's development files are missing (no sqlite3.pc): install libsqlite3-dev (make deps)" >&2; exit 1; }
	@test "$(shell pkg-config --exists libedit && echo yes)" = yes || { echo "heapdump: libedit's development files are missing (no libedit.pc): install libedit-dev (make deps)" >&2; exit 1; }
	@test -n '$(SQLITE_SONAME)' -a -n '$(EDIT_SONAME)' || { echo "heapdump: cannot read the SONAME of libsqlite3.so or libedit.so (objdump -p, from binutils): install libsqlite3-dev, libedit-dev and binutils (make deps)" >&2; exit 1; }
	@touch $@

$(B)/lib/sql.o: lib/sql.c $(B)/.cflags | $(B)/.sql-ok
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) -DHD_SQLITE_SONAME='"$(SQLITE_SONAME)"' -Ilib -c -o $@ $<

$(B)/cli/query_out.o $(B)/cli/query_shell.o: $(B)/%.o: %.c $(B)/.cflags | $(B)/.sql-ok
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) -DHD_SQLITE_SONAME='"$(SQLITE_SONAME)"' \
		-DHD_EDIT_SONAME='"$(EDIT_SONAME)"' -Ilib -c -o $@ $<

$(B)/cli/cmd_query.o: | $(B)/.sql-ok

$(B)/.isal-ok:
	@mkdir -p $(B)
	@test -f /usr/include/isa-l/igzip_lib.h || { echo "heapdump: ISA-L's development files are missing (no isa-l/igzip_lib.h): install libisal-dev (make deps), or inflate with zlib: make ISAL=0" >&2; exit 1; }
	@test -n '$(ISAL_SONAME)' || { echo "heapdump: cannot read the SONAME of libisal.so (objdump -p, from binutils): install libisal-dev and binutils (make deps), or inflate with zlib: make ISAL=0" >&2; exit 1; }
	@touch $@

$(B)/lib/gz.o: lib/gz.c $(B)/.cflags | $(ISAL_OK)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) $(ISAL_CFLAGS) -Ilib -c -o $@ $<

# The program with zlib's inflater (only lib/gz.c differs), for
# tests/cli/gzip.sh: both inflaters pass its cases.
$(B)/gzzlib/gz.o: lib/gz.c $(B)/.cflags
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $< (zlib)")
	$(Q)$(CC) $(ALL_CFLAGS) -Ilib -c -o $@ $<

$(B)/gzzlib/heapdump: $(CLI_OBJ) $(filter-out $(B)/lib/gz.o,$(LIB_OBJ)) $(B)/gzzlib/gz.o | $(GVC_OK) $(MHD_OK)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(EXE_LDFLAGS) -o $@ $^ $(LIBS)

$(B)/cli/graphviz.o: cli/graphviz.c $(B)/.cflags | $(GVC_OK)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) $(GVC_CFLAGS) -Ilib -c -o $@ $<

# libmicrohttpd serves heapdump serve's pages: only cli/serve_http.o
# includes its header, and only the program links it. MHD=0 builds
# without it: serve then says how to get it. The page's files (cli/web/)
# are compiled in by cli/web/embed.sh: nothing is loaded from elsewhere.
ifeq ($(MHD),0)
MHD_CFLAGS := -DHAVE_MHD=0
MHD_OK :=
else
MHD_SONAME = $(call soname_of,libmicrohttpd,microhttpd)
MHD_CFLAGS = -DHAVE_MHD=1 -DHD_MHD_SONAME='"$(MHD_SONAME)"' \
	$(patsubst -I%,-isystem %,$(shell pkg-config --cflags libmicrohttpd 2>/dev/null))
MHD_OK := $(B)/.mhd-ok
endif

# (asked when the rule runs, so that make -n shows no pkg-config here)
$(B)/.mhd-ok:
	@mkdir -p $(B)
	@test "$(shell pkg-config --exists libmicrohttpd && echo yes)" = yes || { echo "heapdump: the development files of libmicrohttpd are missing (no libmicrohttpd.pc): install libmicrohttpd-dev (make deps), or build without the web UI: make MHD=0" >&2; exit 1; }
	@test -n '$(MHD_SONAME)' || { echo "heapdump: cannot read the SONAME of libmicrohttpd.so (objdump -p, from binutils): install libmicrohttpd-dev and binutils (make deps)" >&2; exit 1; }
	@touch $@

$(B)/cli/serve_http.o: cli/serve_http.c $(B)/.cflags | $(MHD_OK)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) $(MHD_CFLAGS) -Ilib -c -o $@ $<

$(B)/cli/serve_assets.c: cli/web/embed.sh $(wildcard cli/web/*.html cli/web/*.js cli/web/*.css)
	@mkdir -p $(dir $@)
	$(Q)sh cli/web/embed.sh $(wildcard cli/web/*.html cli/web/*.js cli/web/*.css) > $@.tmp && mv $@.tmp $@

$(B)/cli/serve_assets.o: $(B)/cli/serve_assets.c $(B)/.cflags
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) -Ilib -Icli -c -o $@ $<

$(B)/heapdump: $(CLI_OBJ) $(B)/libheapdump.a | $(GVC_OK) $(MHD_OK)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(EXE_LDFLAGS) -o $@ $(CLI_OBJ) $(B)/libheapdump.a $(LIBS)

# The same program built without Graphviz, by make GVC=0 in $(B)/nogvc,
# for tests/cli/nogvc.sh.
$(B)/nogvc/heapdump: FORCE
	$(Q)$(MAKE) --no-print-directory B=$(B)/nogvc GVC=0 $@

# The headers each test includes (tests/t.h, tests/unit/*.h, lib/*.h)
# are in its .d file, included at the end.
$(B)/tests/%: tests/unit/%.c $(B)/libheapdump.a $(B)/.cflags
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) -Ilib -Itests $(EXE_LDFLAGS) -o $@ $< $(B)/libheapdump.a $(LIBS)

$(B)/tests/%: tests/tools/%.c $(B)/libheapdump.a $(B)/.cflags
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) -Ilib -Itests $(EXE_LDFLAGS) -o $@ $< $(B)/libheapdump.a $(LIBS)

# replay.c on its own: one source per compiler run, one .d file each
$(B)/tests/fuzz/replay.o: tests/fuzz/replay.c $(B)/.cflags
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) -Ilib -Itests -c -o $@ $<

$(B)/tests/replay_%: tests/fuzz/%.c $(B)/tests/fuzz/replay.o $(B)/libheapdump.a $(B)/.cflags
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) -Ilib -Itests $(EXE_LDFLAGS) -o $@ $< $(B)/tests/fuzz/replay.o $(B)/libheapdump.a $(LIBS)

# The LD_PRELOAD shim of the I/O fault tests; never sanitized (it must
# load before anything else), never installed.
$(B)/tests/faultio.so: tests/faults/faultio.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) -std=c99 -O2 -g $(WARN) -fPIC -shared -o $@ $< -ldl

# The public header must stand alone, as strict C89 and as C++.
$(B)/tests/headertest.ok: lib/heapdump.h tests/headertest.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) -std=c89 -pedantic -Wall -Wextra -Werror -Ilib -c -o $(B)/tests/headertest.o tests/headertest.c
	$(Q)if command -v c++ >/dev/null; then c++ -x c++ -Wall -Wextra -Werror -Ilib -c -o $(B)/tests/headertest_cxx.o tests/headertest.c; fi
	$(Q)touch $@

# The Ruby extension is built by each Ruby's mkmf with that Ruby's flags
# (never SANITIZE: ruby is not an ASan build), out of tree in
# $(B)/ext-VERSION, for every Ruby of RUBIES; make check runs tests/ext
# on each. Default: the ruby on PATH (Debian's) and every tree under
# RUBIES_DIR (RUBIES_DIR/*/bin/ruby). A listed Ruby that is missing fails.
RUBIES_DIR ?= /opt/rubies
RUBIES ?= $(or $(shell command -v ruby 2>/dev/null),ruby) $(wildcard $(RUBIES_DIR)/*/bin/ruby)
# $(B)/ext: a link to the first Ruby's build, for whatever loads "the" gem
# (RUBIES= builds none, for check-one of suites that load no gem)
ext:
	$(Q)for r in $(RUBIES); do sh tests/ext/build.sh "$$r" "$(B)" || exit 1; done
	$(Q)$(if $(strip $(RUBIES)),v=$$($(firstword $(RUBIES)) -e 'print RUBY_VERSION') && \
		{ [ -L $(B)/ext ] || rm -rf $(B)/ext; } && ln -sfn ext-$$v $(B)/ext,:)

TEST_DEPS := all $(UNIT_BIN) $(TOOL_BIN) $(FUZZ_REPLAY) $(B)/tests/headertest.ok \
	$(B)/tests/faultio.so ext $(B)/nogvc/heapdump $(B)/gzzlib/heapdump

# SAN_FLAGS: tests that compile C themselves link like the library.
check: $(TEST_DEPS)
	@HD_RUBIES="$(RUBIES)" SAN_FLAGS="$(if $(SANITIZE),-fsanitize=$(SANITIZE))" sh tests/run.sh

# Runs only the named suite(s): make check-one T=unit/t_scan
check-one: $(TEST_DEPS)
	@HD_RUBIES="$(RUBIES)" SAN_FLAGS="$(if $(SANITIZE),-fsanitize=$(SANITIZE))" sh tests/run.sh $(T)

# Every suite under valgrind (leaks included): the unit suites and the
# fuzz corpora run under it, and so does every heapdump the shell suites
# run (tests/run.sh's HEAPDUMP_WRAP: a run that logs anything fails its
# suite). Graphviz's font stack keeps memory until exit (render).
VALGRIND_CMD := valgrind -q --error-exitcode=9 --leak-check=full \
	--show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect
check-valgrind: $(TEST_DEPS)
	@HD_RUBIES="$(RUBIES)" TEST_WRAP="$(VALGRIND_CMD)" \
	HEAPDUMP_WRAP="$(VALGRIND_CMD) --suppressions=$(CURDIR)/tests/cli/graphviz.vgsupp" \
	sh tests/run.sh $(T)

check-man: all
	@sh tests/man/check_man.sh && sh tests/man/lint.sh && sh tests/man/run_examples.sh

deps:
	@sh .ci/deps
	@sh .ci/npm

demo: all
	@sh data/demo.sh

# the native MRI 3.3/3.4/4.0 fixtures of data/dumps (data/README.md)
fixtures-rubies:
	@bash data/gen/make_fixtures.sh --rubies

# the named sets (the gem with reference names, Ruby 3.1 and 4.0.1)
fixtures-names:
	@B=$(B) RUBY=/usr/bin/ruby bash data/gen/make_fixtures.sh --names

# tests/bench/README.md; the gem's rows only with BENCH_SECTIONS=ext or all
bench: all $(TOOL_BIN) $(if $(filter ext all,$(BENCH_SECTIONS)),ext)
	@B=$(B) HD_RUBIES="$(RUBIES)" sh tests/bench/bench.sh

# serve on three 4.5 M-object dumps: starts and every API call's time
bench-serve: all
	@sh tests/bench/serve_bench.sh --make $(B)/bench-serve

# What clang-format (.clang-format) would change in the C sources: a count.
FORMAT_SRC = $(wildcard lib/*.[ch] lib/util/*.[ch] cli/*.[ch] tests/*.[ch] tests/*/*.[ch] src/*.[ch])
format-check:
	@command -v clang-format >/dev/null || { echo "format-check: install clang-format" >&2; exit 1; }
	@n=$$(clang-format --style=file --dry-run $(FORMAT_SRC) 2>&1 | grep -c 'warning:'); \
	f=$$(clang-format --style=file --dry-run $(FORMAT_SRC) 2>&1 | grep 'warning:' | cut -d: -f1 | sort -u | wc -l); \
	echo "clang-format would make $$n replacements in $$f of $(words $(FORMAT_SRC)) files"

FUZZ_CC ?= clang
fuzz:
	@sh tests/fuzz/run.sh $(FUZZ_CC) $(or $(FUZZ_SECONDS),60)

install: all
	install -d $(DESTDIR)$(bindir) $(DESTDIR)$(libdir) $(DESTDIR)$(includedir) \
		$(DESTDIR)$(mandir)/man1 $(DESTDIR)$(mandir)/man3 $(DESTDIR)$(mandir)/man5 \
		$(DESTDIR)$(pkgconfigdir)
	install -m 755 $(B)/heapdump $(DESTDIR)$(bindir)/heapdump
	install -m 644 $(B)/libheapdump.a $(DESTDIR)$(libdir)/libheapdump.a
	install -m 755 $(B)/libheapdump.so $(DESTDIR)$(libdir)/libheapdump.so.0
	ln -sf libheapdump.so.0 $(DESTDIR)$(libdir)/libheapdump.so
	install -m 644 lib/heapdump.h $(DESTDIR)$(includedir)/heapdump.h
	install -m 644 man/*.1 $(DESTDIR)$(mandir)/man1/
	install -m 644 man/*.3 $(DESTDIR)$(mandir)/man3/
	install -m 644 man/*.5 $(DESTDIR)$(mandir)/man5/
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(libdir)|g' \
		-e 's|@INCLUDEDIR@|$(includedir)|g' -e 's|@VERSION@|$(VERSION)|g' \
		lib/heapdump.pc.in > $(DESTDIR)$(pkgconfigdir)/heapdump.pc

uninstall:
	rm -f $(DESTDIR)$(bindir)/heapdump $(DESTDIR)$(libdir)/libheapdump.* \
		$(DESTDIR)$(includedir)/heapdump.h $(DESTDIR)$(pkgconfigdir)/heapdump.pc
	cd man && for f in *.1; do rm -f $(DESTDIR)$(mandir)/man1/$$f; done
	cd man && for f in *.3; do rm -f $(DESTDIR)$(mandir)/man3/$$f; done
	cd man && for f in *.5; do rm -f $(DESTDIR)$(mandir)/man5/$$f; done

clean:
	rm -rf $(B)

FORCE:
.PHONY: deps all version format-check ext check check-one check-valgrind check-man demo fixtures-rubies fixtures-names bench bench-serve fuzz install uninstall clean FORCE
.DELETE_ON_ERROR:

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(UNIT_BIN:=.d) $(TOOL_BIN:=.d) \
	$(FUZZ_REPLAY:=.d) $(B)/tests/fuzz/replay.d
