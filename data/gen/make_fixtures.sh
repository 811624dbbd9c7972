#!/usr/bin/env bash
# make_fixtures.sh - regenerates every fixture in data/dumps, then checks them.
#
#   data/gen/make_fixtures.sh            # everything (native 3.1 + wasm 3.2-4.0 + native 3.3-4.0)
#   data/gen/make_fixtures.sh --native   # only the native ruby 3.1 files and bad/edge
#   data/gen/make_fixtures.sh --rubies   # only the native 3.3.10, 3.4.8, 4.0.1 files
#   data/gen/make_fixtures.sh --names    # only the named sets (the heapdump gem, names: true)
#   data/gen/make_fixtures.sh --check    # regenerate nothing, only run the checks
#
# Needs: ruby 3.1 (Debian's /usr/bin/ruby; override with RUBY=...), node >= 18
# and npm for the wasm builds (npm ci installs the versions pinned in
# package-lock.json into data/gen/node_modules, which is git-ignored), and
# for --rubies the native trees in RUBIES_DIR (default /opt/rubies, one
# ruby-X.Y.Z/bin/ruby each, see tests/README.md).
# OUT=dir writes somewhere else than data/dumps.
#
# The dumps hold addresses, so every run gives different bytes; the object
# set, the options and the line layout stay the same. data/counts.txt is
# rewritten from the new files (count.rb), so update tests that hard-code
# numbers from it.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
OUT=${OUT:-$(cd .. && pwd)/dumps}
RUBY=${RUBY:-ruby}
WASM_VERSIONS="3.2 3.3 3.4 4.0"
RUBIES_DIR=${RUBIES_DIR:-/opt/rubies}
NATIVE_VERSIONS="3.3.10 3.4.8 4.0.1"

mode=all
case "${1:-}" in
--native) mode=native ;;
--rubies) mode=rubies ;;
--names) mode=names ;;
--check) mode=check ;;
--counts) mode=counts ;;
"") ;;
*) echo "usage: $0 [--native | --rubies | --names | --check | --counts]" >&2; exit 2 ;;
esac

say() { printf '%s\n' "$*" >&2; }
die() { say "make_fixtures: $*"; exit 1; }

mkdir -p "$OUT"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# A clean environment, so that RUBYOPT, RUBYLIB, GEM_* and the like of the
# caller cannot change what the scripts load or allocate.
clean_env() { env -i PATH="$PATH" HOME="$tmp" LANG=C.UTF-8 "$@"; }

native_version=$("$RUBY" -e 'print RUBY_VERSION[/\A\d+\.\d+/]')

# native NAME [VAR=1 ...]: scenario.rb under the native ruby
native() {
	local name=$1
	shift
	clean_env "$@" "$RUBY" --disable-gems scenario.rb "$OUT/$name"
	say "$name: ruby $native_version native ${*:-(no options)}"
}

# wasm VERSION NAME [VAR=1 ...]: scenario.rb under ruby.wasm
wasm() {
	local v=$1 name=$2
	shift 2
	clean_env node --no-warnings run_wasm.mjs "$v" scenario.rb "$OUT/$name" "$@" >/dev/null
	say "$name: ruby $v wasm ${*:-(no options)}"
}

generate_native() {
	[ "$native_version" = 3.1 ] ||
		die "the native fixtures are named ruby3.1, but $RUBY is ruby $native_version (set RUBY=)"
	rm -f "$OUT"/ok_ruby3.1_* "$OUT"/leak_before.json "$OUT"/leak_after.json \
		"$OUT"/leak_later.json "$OUT"/leak_expected.json "$OUT"/leak_observer_* \
		"$OUT"/leak_clusters_* "$OUT"/growth_* "$OUT"/bad_* "$OUT"/edge_*
	native ok_ruby3.1_traced.json TRACE=1
	native ok_ruby3.1_untraced.json
	native ok_ruby3.1_since.json TRACE=1 SINCE=1
	native ok_ruby3.1_full.json FULL=1
	native ok_ruby3.1_clean.json TRACE=1 CLEAN=1
	gzip -9 -n -c "$OUT/ok_ruby3.1_traced.json" >"$OUT/ok_ruby3.1_traced.json.gz"
	say "ok_ruby3.1_traced.json.gz: gzip -9n of ok_ruby3.1_traced.json"

	mkdir "$tmp/leak31"
	clean_env "$RUBY" --disable-gems leak.rb "$tmp/leak31"
	for f in before after later expected; do
		mv "$tmp/leak31/leak_$f.json" "$OUT/leak_$f.json"
	done
	say "leak_{before,after,later,expected}.json: ruby $native_version native leak.rb"

	mkdir "$tmp/observer"
	clean_env "$RUBY" --disable-gems observer.rb "$tmp/observer"
	# Stored gzipped to keep data/ small (2.4-3.1 MB each plain).
	for f in before after later; do
		gzip -9 -n -c "$tmp/observer/leak_observer_$f.json" >"$OUT/leak_observer_$f.json.gz"
	done
	say "leak_observer_{before,after,later}.json.gz: ruby $native_version native observer.rb"

	mkdir "$tmp/clusters"
	clean_env "$RUBY" --disable-gems clusters.rb "$tmp/clusters"
	for f in before after later; do
		gzip -9 -n -c "$tmp/clusters/leak_clusters_$f.json" >"$OUT/leak_clusters_$f.json.gz"
	done
	mv "$tmp/clusters/leak_clusters_expected.json" "$OUT/"
	say "leak_clusters_{before,after,later}.json.gz, leak_clusters_expected.json: ruby $native_version native clusters.rb"
	mkdir "$tmp/growth"
	clean_env "$RUBY" --disable-gems growth.rb "$tmp/growth"
	# Stored gzipped (1.7-2.0 MB each plain, 88-96 KB gzipped).
	for f in 1 2 3 4 5 6; do
		gzip -9 -n -c "$tmp/growth/growth_$f.json" >"$OUT/growth_$f.json.gz"
	done
	mv "$tmp/growth/growth_expected.json" "$OUT/growth_expected.json"
	say "growth_{1..6}.json.gz, growth_expected.json: ruby $native_version native growth.rb"
	# The waste scenario (heapdump strings, heapdump waste), traced.
	clean_env "$RUBY" --disable-gems waste.rb "$tmp/waste.json"
	gzip -9 -n -c "$tmp/waste.json" >"$OUT/waste_ruby3.1.json.gz"
	say "waste_ruby3.1.json.gz: ruby $native_version native waste.rb"

	"$RUBY" make_bad.rb "$OUT" >&2
}

generate_wasm() {
	command -v node >/dev/null || die "node is missing (apt-get install nodejs npm)"
	if [ ! -d node_modules/@ruby/wasm-wasi ]; then
		say "installing the pinned npm packages (npm ci)"
		npm ci --no-audit --no-fund >&2
	fi
	for v in $WASM_VERSIONS; do
		rm -f "$OUT/ok_ruby${v}_"*
	done
	rm -f "$OUT"/leak_ruby3.4_*
	for v in $WASM_VERSIONS; do
		wasm "$v" "ok_ruby${v}_traced.json" TRACE=1
		wasm "$v" "ok_ruby${v}_untraced.json"
		wasm "$v" "ok_ruby${v}_since.json" TRACE=1 SINCE=1
	done
	mkdir "$tmp/leak34"
	clean_env node --no-warnings run_wasm.mjs 3.4 leak.rb "$tmp/leak34" >/dev/null
	# Stored gzipped to keep data/ small; the expectation stays plain.
	for f in before after later; do
		gzip -9 -n -c "$tmp/leak34/leak_$f.json" >"$OUT/leak_ruby3.4_$f.json.gz"
	done
	mv "$tmp/leak34/leak_expected.json" "$OUT/leak_ruby3.4_expected.json"
	say "leak_ruby3.4_{before,after,later}.json.gz, leak_ruby3.4_expected.json: ruby 3.4 wasm leak.rb"
}

# The native MRI 3.3, 3.4 and 4.0 sets: the same scripts under each tree of
# RUBIES_DIR, named by the full version (ok_ruby4.0.1_traced.json.gz beside
# the wasm ok_ruby4.0_traced.json), stored gzipped (2.5-3 MB each plain).
generate_rubies() {
	local v r n f
	for v in $NATIVE_VERSIONS; do
		r=$RUBIES_DIR/ruby-$v/bin/ruby
		[ -x "$r" ] || die "$r is missing: extract ruby-$v-debian12-amd64.tar.xz into $RUBIES_DIR (tests/README.md)"
		[ "$("$r" -e 'print RUBY_VERSION')" = "$v" ] || die "$r is not ruby $v"
	done
	for v in $NATIVE_VERSIONS; do
		r=$RUBIES_DIR/ruby-$v/bin/ruby
		rm -f "$OUT/ok_ruby${v}_"* "$OUT/leak_ruby${v}_"*
		for n in traced:TRACE=1 untraced: since:"TRACE=1 SINCE=1"; do
			# shellcheck disable=SC2086
			clean_env ${n#*:} "$r" --disable-gems scenario.rb "$tmp/ok.json"
			gzip -9 -n -c "$tmp/ok.json" >"$OUT/ok_ruby${v}_${n%%:*}.json.gz"
			say "ok_ruby${v}_${n%%:*}.json.gz: ruby $v native ${n#*:}"
		done
		mkdir "$tmp/leak$v"
		clean_env "$r" --disable-gems leak.rb "$tmp/leak$v"
		for f in before after later; do
			gzip -9 -n -c "$tmp/leak$v/leak_$f.json" >"$OUT/leak_ruby${v}_$f.json.gz"
		done
		mv "$tmp/leak$v/leak_expected.json" "$OUT/leak_ruby${v}_expected.json"
		say "leak_ruby${v}_{before,after,later}.json.gz, leak_ruby${v}_expected.json: ruby $v native leak.rb"
	done
	# 4.0: the cache in a class-level ivar (class -> IMEMO/fields -> Hash),
	# object ids taken, every object moved before each phase
	v=4.0.1
	mkdir "$tmp/compact"
	clean_env HOLDER=ivar OBJECT_ID=1 COMPACT=1 "$RUBIES_DIR/ruby-$v/bin/ruby" --disable-gems leak.rb "$tmp/compact"
	for f in before after later; do
		gzip -9 -n -c "$tmp/compact/leak_$f.json" >"$OUT/leak_ruby${v}_compact_$f.json.gz"
	done
	mv "$tmp/compact/leak_expected.json" "$OUT/leak_ruby${v}_compact_expected.json"
	say "leak_ruby${v}_compact_*: ruby $v native leak.rb HOLDER=ivar OBJECT_ID=1 COMPACT=1"
	clean_env "$RUBIES_DIR/ruby-$v/bin/ruby" --disable-gems waste.rb "$tmp/waste.json"
	gzip -9 -n -c "$tmp/waste.json" >"$OUT/waste_ruby${v}.json.gz"
	say "waste_ruby${v}.json.gz: ruby $v native waste.rb"
	# hostile names (Module#set_temporary_name, 3.3+): report's three
	# dumps (xss.rb) and serve's one page (xss_page.rb), under 3.4.8
	v=3.4.8
	r=$RUBIES_DIR/ruby-$v/bin/ruby
	mkdir "$tmp/xss"
	clean_env "$r" --disable-gems xss.rb "$tmp/xss"
	for f in before after later; do
		gzip -9 -n -c "$tmp/xss/xss_$f.json" >"$OUT/xss_ruby${v}_$f.json.gz"
	done
	say "xss_ruby${v}_{before,after,later}.json.gz: ruby $v native xss.rb"
	clean_env "$r" --disable-gems xss_page.rb "$tmp/xss_page.json"
	gzip -9 -n -c "$tmp/xss_page.json" >"$OUT/xss_ruby${v}.json.gz"
	say "xss_ruby${v}.json.gz: ruby $v native xss_page.rb"
}

# The named sets: the four scenarios dumped by the heapdump gem (src/)
# with reference names, HeapDump.dump(names: true), under Debian's Ruby
# 3.1 ($RUBY) and native 4.0.1: named_rubyV_SCENARIO_{before,after,later}
# .json.gz, SCENARIO = leak (LeakyCache::CACHE), leak_ivar (HOLDER=ivar:
# @cache), observer, names (data/gen/names.rb), plus the expectations the
# scripts write (named_rubyV_leak*_expected.json, named_rubyV_names_expected.json).
# The extension is built for each Ruby first (tests/ext/build.sh, in B,
# default build/ at the top of the tree).
generate_names() {
	local top b r v n h f
	top=$(cd ../.. && pwd)
	b=${B:-build}
	case $b in /*) ;; *) b=$top/$b ;; esac
	for r in "$RUBY" "$RUBIES_DIR/ruby-4.0.1/bin/ruby"; do
		[ -x "$(command -v "$r")" ] || die "$r is missing (tests/README.md)"
		sh "$top/tests/ext/build.sh" "$r" "$b" >&2 || die "cannot build the extension for $r"
		v=$("$r" -e 'print RUBY_VERSION')
		case $v in 3.1.*) n=3.1 ;; *) n=$v ;; esac
		rm -f "$OUT/named_ruby${n}_"*
		for h in leak:leak.rb: leak_ivar:leak.rb:HOLDER=ivar observer:observer.rb: names:names.rb:; do
			local name=${h%%:*} rest=${h#*:} script opt
			script=${rest%%:*}
			opt=${rest#*:}
			rm -rf "$tmp/named"
			mkdir "$tmp/named"
			# shellcheck disable=SC2086
			clean_env DUMPER=heapdump $opt "$r" --disable-gems -I "$b/ext-$v" -I "$top/src/lib" "$script" "$tmp/named"
			for f in before after later; do
				gzip -9 -n -c "$tmp/named/"*"_$f.json" >"$OUT/named_ruby${n}_${name}_$f.json.gz"
			done
			for f in "$tmp/named/"*_expected.json; do
				[ -f "$f" ] && mv "$f" "$OUT/named_ruby${n}_${name}_expected.json"
			done
			say "named_ruby${n}_${name}_*: ruby $v native $script DUMPER=heapdump $opt"
		done
	done
}

# ------------------------------------------------------------------ checks

fail=0
check() { # check WHAT CONDITION...
	local what=$1
	shift
	if "$@"; then :; else
		say "CHECK FAILED: $what"
		fail=1
	fi
}

count() { "$RUBY" count.rb "$1"; }
field() { "$RUBY" -rjson -e 'v = JSON.parse(STDIN.read)[ARGV[0]]; print(v.nil? ? "" : v.to_s)' "$1"; }
has() { gzip -dcf "$1" | grep -a -- "$2" >/dev/null; }  # not -q: gzip would get SIGPIPE
hasnt() { ! has "$@"; }

run_checks() {
	local f n got want key e
	# bad_* and edge_*: .expect against count.rb
	for e in "$OUT"/bad_*.expect "$OUT"/edge_*.expect; do
		f=${e%.expect}
		[ -f "$f" ] || { check "$f exists" false; continue; }
		grep -q '^format=' "$e" && continue   # not dump_all NDJSON: count.rb does not read it
		count "$f" >"$tmp/c.json"
		for key in objects roots bad_lines first_bad_line duplicates dangling; do
			want=$(sed -n "s/^$key=//p" "$e")
			[ -n "$want" ] || continue
			got=$(field "$key" <"$tmp/c.json")
			check "$(basename "$f"): $key expected $want, count.rb says $got" [ "$want" = "$got" ]
		done
		case $(basename "$f") in
		bad_*) check "$(basename "$f"): a bad_ file reports a bad line" hasnt "$e" '^bad_lines=0$' ;;
		edge_*) check "$(basename "$f"): an edge_ file has bad_lines=0" grep -q '^bad_lines=0$' "$e" ;;
		esac
	done

	# ok_*: version traits
	for f in "$OUT"/ok_ruby*.json "$OUT"/ok_ruby*.json.gz; do
		n=$(basename "$f" .gz)
		case $n in
		ok_ruby3.1_*) check "$n: no SHAPE lines before 3.2" hasnt "$f" '"type":"SHAPE"' ;;
		*) check "$n: SHAPE lines from 3.2" has "$f" '"type":"SHAPE"' ;;
		esac
		case $n in
		ok_ruby4.0_* | ok_ruby4.0.*) check "$n: 4.0 flags carry an integer age" has "$f" '"age":[0-9]' ;;
		*) check "$n: no integer flags before 4.0" hasnt "$f" '"age":[0-9]' ;;
		esac
		case $n in
		*_untraced.json | *_full.json) check "$n: untraced has no file fields" hasnt "$f" '"file":"scenario.rb"' ;;
		*) check "$n: traced objects carry file scenario.rb" has "$f" '"file":"scenario.rb"' ;;
		esac
		case $n in
		*_since.json) check "$n: since: dumps have no ROOT lines" hasnt "$f" '"type":"ROOT"' ;;
		*) check "$n: ROOT lines" has "$f" '"type":"ROOT"' ;;
		esac
		case $n in
		*_traced.json | *_since.json) check "$n: raw quote in file" has "$f" '"file":"we"ird.rb"' ;;
		esac
		case $n in
		*_full.json) check "$n: full: NONE lines" has "$f" '"type":"NONE"' ;;
		esac
		# what the native 4.0 dumps are for: imemo fields, flags.object_id,
		# the global_symbols root; 3.4 has no finalizers/object_id root
		case $n in
		ok_ruby4.0.*_since.json) ;;
		ok_ruby4.0.*)
			check "$n: imemo fields" has "$f" '"imemo_type":"fields"'
			check "$n: flags.object_id" has "$f" '"object_id":[0-9]'
			check "$n: ROOT global_symbols" has "$f" '"root":"global_symbols"' ;;
		ok_ruby3.4.*_since.json) ;;
		ok_ruby3.4.*)
			check "$n: no finalizers root on 3.4" hasnt "$f" '"root":"finalizers"'
			check "$n: chilled strings" has "$f" '"chilled":true' ;;
		esac
		count "$f" >"$tmp/c.json"
		got=$(field bad_lines <"$tmp/c.json")
		case $n in
		*_untraced.json | *_full.json | *_clean.json)
			check "$n: every line is valid JSON (count.rb bad_lines=$got)" [ "$got" = 0 ] ;;
		*) check "$n: the raw-quote line is reported (count.rb bad_lines=$got)" [ "$got" -ge 1 ] ;;
		esac
	done
	check "ok_ruby3.1_traced.json.gz is a copy of ok_ruby3.1_traced.json" \
		cmp -s <(gzip -dc "$OUT/ok_ruby3.1_traced.json.gz") "$OUT/ok_ruby3.1_traced.json"

	# the observer set: phase A's requests (5 objects each) are alive in
	# LATER, held only by the event bus; the ring holds phase B's
	f="$OUT/leak_observer_later.json.gz"
	if [ -f "$f" ]; then
		n=$(gzip -dc "$f" | grep -c '"struct":"proc".*"file":"observer.rb", "line":53,')
		check "leak_observer_later: 860 procs of observer.rb:53 (found $n)" [ "$n" = 860 ]
	fi

	# the clusters set: three phases (warm-up, A, B) of 3 x 150 cache
	# entries and 250 audit records are alive in LATER
	f="$OUT/leak_clusters_later.json.gz"
	if [ -f "$f" ]; then
		n=$(gzip -dc "$f" | grep '"type":"OBJECT"' | grep -c '"file":"clusters.rb", "line":50,')
		check "leak_clusters_later: 1350 CacheEntry objects of clusters.rb:50 (found $n)" [ "$n" = 1350 ]
		n=$(gzip -dc "$f" | grep '"type":"OBJECT"' | grep -c '"file":"clusters.rb", "line":79,')
		check "leak_clusters_later: 750 AuditRecord objects of clusters.rb:79 (found $n)" [ "$n" = 750 ]
	fi

	# leak sets: the expected leak equals an independent three-dump diff
	for p in leak_ leak_ruby3.4_ leak_ruby3.3.10_ leak_ruby3.4.8_ leak_ruby4.0.1_ leak_ruby4.0.1_compact_ \
		named_ruby3.1_leak_ named_ruby3.1_leak_ivar_ named_ruby4.0.1_leak_ named_ruby4.0.1_leak_ivar_; do
		[ -f "$OUT/${p}expected.json" ] || continue
		check "${p}*: leak_check.rb" "$RUBY" leak_check.rb "$OUT" "$p"
	done
}

write_counts() {
	local f
	{
		printf '# data/counts.txt - count.rb over every dump in data/dumps (written by data/gen/make_fixtures.sh)\n'
		printf '# file\tobjects\tshapes\troots\troot_categories\tedges\tmemsize\tbad_lines\tfirst_bad_line\tduplicates\tdangling\tgenerations\n'
		for f in "$OUT"/*.json "$OUT"/*.json.gz; do
			case $(basename "$f") in edge_memprof.json | leak_*expected.json | growth_expected.json) continue ;; esac
			count "$f" | "$RUBY" -rjson -e '
				j = JSON.parse(STDIN.read)
				g = j["generations"] ? j["generations"].join("-") : "-"
				puts [ARGV[0], *%w[objects shapes roots root_categories edges memsize bad_lines first_bad_line duplicates dangling].map { |k| j[k] }, g].join("\t")
			' "$(basename "$f")"
		done
	} >"$tmp/counts.txt"
	mv "$tmp/counts.txt" "$OUT/../counts.txt"
}

case $mode in
all) generate_native; generate_wasm; generate_rubies; generate_names ;;
native) generate_native ;;
rubies) generate_rubies ;;
names) generate_names ;;
esac
run_checks
[ "$mode" = check ] || write_counts

total=$(du -cb "$OUT"/* | tail -1 | cut -f1)
say "data/dumps: $(find "$OUT" -type f | wc -l) files, $total bytes"
[ $fail = 0 ] || die "some checks failed"
say "all checks passed"
