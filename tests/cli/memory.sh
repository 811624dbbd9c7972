#!/bin/sh
# memory.sh - heapdump memory (issue 35 section 1): where each dump's RSS
# goes, from the whole-process figures of the gem's sidecars, on every
# Ruby of HD_RUBIES (make check's RUBIES) with this build's gem.
#
#  - dumps: data/gen/memory_split.rb, two gem dumps a mode (BEFORE,
#    AFTER): "ruby" keeps 40 MB of Strings, "native" mallocs 40 MB never
#    freed (Fiddle.malloc; on 4.0, without Fiddle, data/gen/native_alloc
#    built here with mkmf), "frag" mallocs 160 MB of 1,500-byte blocks
#    and frees three of every four, "iseq" module_evals 3,000 methods
#    with allocation tracing on, "none" starts four waiting threads.
#  - the buckets of every dump add up to its RSS (JSON), the file-backed
#    bucket is rss - anon of the sidecar;
#  - the verdict names the group that grew: ruby -> Ruby objects (at
#    least 80% of the 40 MB), native -> malloc outside Ruby objects,
#    frag -> malloc held free (at least the 40 MB kept free... of 120),
#    none and iseq -> no group; text, JSON and TSV say the same sentence;
#  - iseq: the first IMEMO/iseq site is memory_split.rb at the
#    module_eval line, 3,000 iseqs or more;
#  - the sidecar: mem_rss, mem_anon <= mem_rss, the page size of
#    GC::INTERNAL_CONSTANTS, the four threads' stacks (5 or more), YJIT's
#    code under --yjit (3.3 and later);
#  - an older sidecar (no mem_ keys) still reads: RSS and malloc in use
#    split, the rest unexplained, still adding up; stats still reads it;
#    a dump without a sidecar fails (exit 1) and says so;
#  - the gem's Heap#memory is memory -f json's buckets; report (leak and
#    one-dump pages) and stats show the same split;
#  - serve (first Ruby only): /api/overview's memory is memory -f json's,
#    and the overview in Debian's chromium shows it, a column a dump
#    (tests/tools/serve_memory_browser.mjs);
#  - heapdump dump --attach (no gem in the process) writes a sidecar of
#    /proc's figures, which memory splits.
. "$(dirname "$0")/../lib.sh"
needs jq jq

H=$HEAPDUMP
PIDS=""
trap 'for p in $PIDS; do kill "$p" 2>/dev/null; done; rm -rf "$TMP"' EXIT

# the Ruby's gem build directory, or "" (said) when it was not built
ext_of() {
	v=$("$1" -e 'print RUBY_VERSION')
	case ${B:-build} in
	/*) e=$B/ext-$v ;;
	*) e=$TOP/${B:-build}/ext-$v ;;
	esac
	if [ -f "$e/heapdump_ext.so" ]; then echo "$e"; else
		notok "$v/gem" "$e/heapdump_ext.so is missing: make ext RUBIES=$1"
	fi
}

# gen RUBY EXT DIR MODE [RUBYOPT]: two dumps into DIR, the truth into DIR/truth.json
gen() {
	mkdir -p "$3"
	lib="$2:$TOP/src/lib"
	if ! "$1" -e 'require "fiddle"' 2>/dev/null; then
		if [ ! -f "$TMP/na-$v/native_alloc.so" ]; then
			mkdir -p "$TMP/na-$v"
			cp "$TOP"/data/gen/native_alloc/* "$TMP/na-$v/"
			(cd "$TMP/na-$v" && "$1" extconf.rb && make) >"$TMP/na.log" 2>&1 ||
				{ notok "$v/native_alloc" "build failed: $(tail -c 300 "$TMP/na.log")"; return 1; }
		fi
		lib="$lib:$TMP/na-$v"
	fi
	env -i PATH="$PATH" HOME="$TMP" RUBYLIB="$lib" RUBYOPT="${5:-}" "$1" \
		"$TOP/data/gen/memory_split.rb" "$3" "$4" >"$3/truth.json" 2>"$TMP/gen.err" ||
		{ notok "$v/$4/gen" "memory_split.rb failed: $(head -c 300 "$TMP/gen.err")"; return 1; }
}

# adds_up T JSON: every known dump's buckets add up to its RSS
adds_up() {
	check "$1/adds-up" true "$(jq '[.dumps[] | select(.known) | ([.buckets[] | values] | add) == .rss] | length > 0 and all' "$2")"
}

for R in ${HD_RUBIES:-ruby}; do
	R=$(command -v "$R") || continue
	EXT=$(ext_of "$R")
	[ -n "$EXT" ] || continue
	v=$("$R" -e 'print RUBY_VERSION')
	for mode in ruby native frag iseq none; do
		d="$TMP/$v-$mode"
		t="$v/$mode"
		gen "$R" "$EXT" "$d" $mode || continue
		set -- "$d/before.json" "$d/after.json"
		"$H" memory -q -f json "$@" >"$d/m.json" 2>"$d/err" || notok "$t/json" "exit $?: $(head -c 200 "$d/err")"
		"$H" memory -q "$@" >"$d/m.txt" 2>"$d/err" || notok "$t/text" "exit $?"
		"$H" memory -q -f tsv "$@" >"$d/m.tsv" 2>"$d/err" || notok "$t/tsv" "exit $?"
		adds_up "$t" "$d/m.json"
		check "$t/file-is-rss-minus-anon" true "$(jq -s '.[0] as $m | .[1] | .mem_rss - .mem_anon == $m.dumps[1].buckets.file' "$d/m.json" "$d/after.json.hdmeta")"
		bytes=$(jq .bytes "$d/truth.json")
		group=$(jq -r .verdict.group "$d/m.json")
		text=$(jq -r .verdict.text "$d/m.json")
		case $mode in
		ruby) want=ruby ;;
		native) want=native_malloc ;;
		frag) want=malloc_free ;;
		*) want=none ;;
		esac
		check "$t/verdict-group" "$want" "$group"
		if [ $want != none ]; then
			check "$t/verdict-growth" true "$(jq --argjson b "$bytes" '.verdict.growth >= 0.8 * $b' "$d/m.json")"
		fi
		check "$t/text-verdict" "verdict: $text" "$(grep '^verdict: ' "$d/m.txt")"
		check "$t/tsv-verdict" "$group" "$(awk -F'\t' '$1 == "verdict" { print $2 }' "$d/m.tsv")"
		check "$t/tsv-adds-up" true "$(awk -F'\t' '$1 == "rss" && $2 ~ /after/ { r = $3 } $1 == "bucket" && $2 ~ /after/ { s += $4 } END { print (r > 0 && r == s) ? "true" : "false" }' "$d/m.tsv")"
		# the gem's API: Heap#memory is memory -f json's buckets
		env -i PATH="$PATH" HOME="$TMP" RUBYLIB="$EXT:$TOP/src/lib" "$R" -rheapdump -rjson \
			-e 'm = HeapDump.load(ARGV[0]).memory; puts JSON.generate(m.to_h.reject { |k, _| %i[rss overcount].include?(k) })' \
			"$d/after.json" >"$d/api.json" 2>"$d/err" || notok "$t/api" "exit $?: $(head -c 300 "$d/err")"
		check "$t/api-memory" "$(jq -cS '.dumps[1].buckets' "$d/m.json")" "$(jq -cS . "$d/api.json" 2>/dev/null)"
		case $mode in
		ruby) check_grep "$t/text-names-ruby" '^verdict: Ruby objects grew by' "$d/m.txt" ;;
		native)
			check_grep "$t/text-names-malloc" '^verdict: malloc outside Ruby objects grew by' "$d/m.txt"
			# the report: the split of each dump, the values of memory -f json
			"$H" report -q "$@" -o "$d/r.html" 2>"$d/err" || notok "$t/report" "exit $?: $(head -c 200 "$d/err")"
			"$H" report -q "$d/after.json" -o "$d/r1.html" 2>"$d/err" || notok "$t/report-one" "exit $?: $(head -c 200 "$d/err")"
			want=$(jq -r '[.dumps[].buckets.other_malloc] | map(tostring) | join(" ")' "$d/m.json")
			check "$t/report-split" "$want" "$(grep -o 'class="other_malloc" value="[0-9]*"' "$d/r.html" | grep -o '[0-9]*' | tr '\n' ' ' | sed 's/ $//')"
			check "$t/report-one-split" "$(jq -r '.dumps[1].buckets.other_malloc' "$d/m.json")" \
				"$(grep -o 'class="other_malloc" value="[0-9]*"' "$d/r1.html" | grep -o '[0-9]*')"
			# stats: its process section has the split too
			"$H" stats -q -f json "$d/after.json" >"$d/s.json" 2>"$d/err" || notok "$t/stats" "exit $?"
			check "$t/stats-split" "$(jq -c '.dumps[1].buckets | with_entries(select(.value != null)) | del(.object_malloc)' "$d/m.json")" \
				"$(jq -c '.process.memory | del(.rss) | del(.object_malloc)' "$d/s.json")"
			check_grep "$t/stats-text" '^rss split ' "$("$H" stats -q "$d/after.json" >"$d/s.txt"; echo "$d/s.txt")"
			# serve (first Ruby only): /api/overview's split is memory's,
			# and the overview page in Debian's chromium shows it per dump
			if [ -z "${serve_done:-}" ] && "$H" serve --help >/dev/null 2>&1; then
				serve_done=1
				if serve_start "serve-$v" 600 "$H" serve -q --no-cache "$@"; then
					curl -s "$BASE/api/overview?token=$TOKEN" >"$d/ov.json"
					check "$t/serve-api-memory" "$(jq -c '[.dumps[] | [.rss] + [.buckets[]]]' "$d/m.json")" \
						"$(jq -c '[.memory.dumps[] | [.rss] + .bytes]' "$d/ov.json")"
					if [ -d "$TOP/tests/node_modules/puppeteer-core" ]; then
						(cd "$TOP/tests" && node tools/serve_memory_browser.mjs "$SUITE/$t/serve-page" "$URL" \
							"$(jq -c '[.memory.dumps[] | [.rss] + .bytes]' "$d/ov.json")") 2>"$TMP/browser.err" ||
							notok "$t/serve-page" "exit $?: $(head -c 300 "$TMP/browser.err")"
					else
						notok "$t/serve-page" "the npm package puppeteer-core is missing: npm ci --prefix tests (or make deps)"
					fi
					kill "$SPID"
					wait "$SPID" 2>/dev/null
				fi
			fi
			;;
		frag) check_grep "$t/text-names-fragmentation" '^verdict: malloc held free grew by .*fragmentation' "$d/m.txt" ;;
		iseq)
			line=$(jq .line "$d/truth.json")
			check "$t/iseq-site" "memory_split.rb:$line" \
				"$(jq -r '.dumps[1].iseq_sites[0] | "\(.file | split("/") | last):\(.line)"' "$d/m.json")"
			check "$t/iseq-count" true "$(jq '.dumps[1].iseq_sites[0].count >= 3000' "$d/m.json")"
			check_grep "$t/iseq-text" "B +[0-9]+  .*memory_split.rb:$line\$" "$d/m.txt"
			;;
		none)
			check "$t/stacks" true "$(jq '.mem_stack_count >= 5 and .mem_stacks > 0' "$d/after.json.hdmeta")"
			check "$t/stacks-bucket" true "$(jq '.dumps[1].buckets.stacks > .dumps[0].buckets.stacks' "$d/m.json")"
			check "$t/sidecar" true "$(jq --argjson p "$("$R" -e 'print GC::INTERNAL_CONSTANTS[:HEAP_PAGE_SIZE]')" \
				'.mem_rss > 0 and .mem_anon <= .mem_rss and .mem_heap_page_size == $p and .mem_heap_bytes == .mem_heap_pages * $p and .mem_live_slot_bytes > 0 and .heapdump_sidecar == 1' "$d/after.json.hdmeta")"
			# an older gem's sidecar: no mem_ keys, and its old name
			o="$TMP/$v-old"
			mkdir -p "$o"
			for k in before after; do
				cp "$d/$k.json" "$o/$k.json"
				jq -c 'with_entries(select(.key | startswith("mem_") or . == "heapdump_memory" | not))' \
					"$d/$k.json.hdmeta" >"$o/$k.json.meta.json"
			done
			"$H" memory -q -f json "$o/before.json" "$o/after.json" >"$o/m.json" 2>"$o/err" || notok "$t/old-sidecar" "exit $?: $(head -c 200 "$o/err")"
			adds_up "$t/old-sidecar" "$o/m.json"
			check "$t/old-sidecar-split" '[true,null,true,true,""]' "$(jq -c '.dumps[1] | [.known, .buckets.slots_live, .buckets.other_malloc != null, .buckets.unexplained > 0, .source]' "$o/m.json")"
			check_grep "$t/old-sidecar-stats" '^rss ' "$("$H" stats -q "$o/after.json" >"$o/stats.txt"; echo "$o/stats.txt")"
			check_grep "$t/new-sidecar-stats" '^rss ' "$("$H" stats -q "$d/after.json" >"$d/stats.txt"; echo "$d/stats.txt")"
			# a sidecar's strings are escaped in text (a terminal escape)
			printf '{"heapdump_sidecar":1,"pid":1,"rss_bytes":100,"ruby_version":"3.\033[2J1","mem_rss":100,"mem_anon":50,"mem_allocator":"gl\001ibc"}\n' >"$o/after.json.meta.json"
			"$H" memory -q "$o/after.json" >"$o/esc.txt" 2>&1
			check "$t/text-escaped" "0 1" "$(tr -d '\n' <"$o/esc.txt" | od -An -c | grep -c '033' ) $(grep -c 'ruby 3.\\u001b\[2J1, malloc gl\\u0001ibc' "$o/esc.txt")"
			rm "$o/before.json.meta.json" "$o/after.json.meta.json"
			check_rc "$t/no-sidecar-fails" 1 "$H" memory -q "$o/after.json"
			check_grep "$t/no-sidecar-says" 'no sidecar' "$TMP/out"
			;;
		esac
	done
	# heapdump dump --attach (first Ruby only, gdb): no gem, so no sidecar
	# of the process's own; heapdump writes one from /proc
	if [ -z "${attach_done:-}" ] && command -v gdb >/dev/null; then
		attach_done=1
		mkdir -p "$TMP/att"
		"$R" -e 'a = Array.new(20_000) { "x" * 100 }; $stdout.puts(a.size); $stdout.flush; sleep 120' >"$TMP/att/ready" &
		rp=$!
		i=0
		while [ ! -s "$TMP/att/ready" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
		"$H" dump --attach --dir "$TMP/att" --timeout 60 -q -o "$TMP/att/a.json" $rp >/dev/null 2>"$TMP/att/err" ||
			notok "$v/attach" "exit $?: $(head -c 300 "$TMP/att/err")"
		kill $rp 2>/dev/null
		wait $rp 2>/dev/null
		check "$v/attach-sidecar" true "$(jq --argjson p $rp '.heapdump_sidecar == 1 and .pid == $p and .mem_source == "proc" and .mem_rss > 0 and .mem_anon <= .mem_rss and .mem_stack_count >= 1' "$TMP/att/a.json.hdmeta" 2>/dev/null)"
		"$H" memory -q -f json "$TMP/att/a.json" >"$TMP/att/m.json" 2>"$TMP/att/err" || notok "$v/attach-memory" "exit $?"
		adds_up "$v/attach" "$TMP/att/m.json"
	fi
	# YJIT's code in the sidecar and the JIT bucket (3.3 and later)
	if "$R" --yjit -e 'exit(RUBY_VERSION >= "3.3" && RubyVM::YJIT.enabled? ? 0 : 1)' 2>/dev/null; then
		d="$TMP/$v-yjit"
		if gen "$R" "$EXT" "$d" none --yjit; then
			"$H" memory -q -f json "$d/before.json" "$d/after.json" >"$d/m.json" 2>"$d/err"
			check "$v/yjit-bucket" true "$(jq '.dumps[1].buckets.jit > 0' "$d/m.json")"
			adds_up "$v/yjit" "$d/m.json"
		fi
	fi
done
