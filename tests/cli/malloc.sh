#!/bin/sh
# malloc.sh - heapdump malloc (man 1 heapdump-malloc) on snapshots of
# format 1 (man 5 heapdump-malloc) written by msnap_gen.py, and its run
# mode with a stand-in tracker (a shared object that does nothing, and a
# shell command that writes what the tracker would):
#  - report: three snapshots 10 s apart, leak.rb:5 growing 10 MB a step
#    (the article's leak: 1024-byte blocks, half freed): the verdict
#    names it with +20.0 MB and 1.0 MB/s; JSON's slope 1,000,000 B/s and
#    mwrap's growth estimate 20,000,000; TSV and NDJSON one row a site;
#    --top; one snapshot; flat; a snapshot without tracking
#  - the join: a snapshot whose Ruby site is the fixture's heaviest
#    file:line: dump_memsize equals jq's sum over the dump's objects
#    there, unexplained the rest
#  - hostile: site names with ESC and an invalid byte print escaped in
#    text and TSV (no raw ESC), exact in JSON; damaged lines skipped and
#    said, --strict fails at their line; format 2, no format, not a
#    snapshot refused (exit 1); usage errors (exit 2)
#  - run: the environment the tracker gets, the program's exit status,
#    a signal forwarded, the snapshots listed; a missing tracker said
. "$(dirname "$0")/../lib.sh"
needs jq jq

H=$HEAPDUMP
GEN="python3 $TOP/tests/cli/msnap_gen.py"
S=$TMP/s
mkdir -p "$S"

# ---- three snapshots of one growing process ----
for k in 0 1 2; do
	a=$((20000 * k)) f=$((10000 * k))
	$GEN "$S/g$k.ndjson" 4242 $((1000 + 10 * k)) \
		"ruby:$a:$f:$((1024 * a)):$((1024 * (a - f))):leak.rb:5" \
		"ruby:10:5:1000:500:flat.rb:2" \
		"c:$((k + 1)):0:64:$((64 * (k + 1))):libfoo.so:foo_alloc+0x1c"
done
"$H" malloc "$S/g0.ndjson" "$S/g1.ndjson" "$S/g2.ndjson" >"$TMP/out" 2>"$TMP/err"
check growth_exit 0 "$?"
check_grep growth_verdict '^verdict: native memory grows at leak\.rb:5: \+20\.5 MB live from the first snapshot to the last \(3 snapshots over 20\.0 s, 1\.0 MB/s, at every snapshot\)' "$TMP/out"
check growth_first_row "leak.rb:5" "$(awk '/ KIND  SITE/ { getline; print $NF; exit }' "$TMP/out")"
"$H" malloc -f json "$S"/g[012].ndjson >"$TMP/j" 2>"$TMP/err"
check json_judgement grows "$(jq -r .judgement "$TMP/j")"
check json_slope 1024000 "$(jq '.sites[0].slope | round' "$TMP/j")"
check json_growth 20480000 "$(jq '.sites[0].growth' "$TMP/j")"
check json_growth_estimate 20480000 "$(jq '.sites[0].growth_estimate' "$TMP/j")"
check json_estimate 20480000 "$(jq '.sites[0].estimate' "$TMP/j")"
check json_live_series "0,10240000,20480000" "$(jq -r '.sites[0].live | map(tostring) | join(",")' "$TMP/j")"
check json_snapshots 3 "$(jq '.snapshots | length' "$TMP/j")"
"$H" malloc -f tsv "$S"/g[012].ndjson >"$TMP/t" 2>"$TMP/err"
check tsv_rows 4 "$(wc -l <"$TMP/t" | tr -d ' ')"
check tsv_first "ruby	leak.rb:5	20480000" "$(sed -n 2p "$TMP/t" | cut -f1-3)"
"$H" malloc -f ndjson "$S"/g[012].ndjson >"$TMP/n" 2>"$TMP/err"
check ndjson_lines "verdict site site site" "$(jq -r .type "$TMP/n" | tr '\n' ' ' | sed 's/ $//')"
"$H" malloc --top 1 -f json "$S"/g[012].ndjson >"$TMP/j1"
check top_one "1 3" "$(jq -r '"\(.sites | length) \(.site_count)"' "$TMP/j1")"
"$H" malloc --min-growth 30000000 "$S"/g[012].ndjson >"$TMP/out" 2>&1
check_grep min_growth_flat '^verdict: no native growth: .*\(no site grew by 30\.0 MB or more\)' "$TMP/out"

# ---- one snapshot; flat; not tracking ----
"$H" malloc "$S/g2.ndjson" >"$TMP/out" 2>&1
check_grep one_verdict '^verdict: the most native memory is held at leak\.rb:5: 20\.5 MB live in 20,000 blocks' "$TMP/out"
$GEN "$S/f1.ndjson" 77 10 "ruby:10:5:1000:500:a.rb:1"
$GEN "$S/f2.ndjson" 77 20 "ruby:12:7:1200:500:a.rb:1"
"$H" malloc "$S/f1.ndjson" "$S/f2.ndjson" >"$TMP/out" 2>&1
check_grep flat_verdict '^verdict: no native growth: the tracked live bytes went from 500 B to 500 B over 2 snapshots' "$TMP/out"
$GEN "$S/off.ndjson" 77 30 --no-tracking "another allocator was preloaded ahead of it (libjemalloc.so.2)"
"$H" malloc -f json "$S/f1.ndjson" "$S/off.ndjson" >"$TMP/j" 2>&1
check inactive_judgement inactive "$(jq -r .judgement "$TMP/j")"
check inactive_verdict "the tracker was not active (snapshot 2 of 2, pid 77): another allocator was preloaded ahead of it (libjemalloc.so.2): it recorded no allocation" "$(jq -r .verdict "$TMP/j")"
check_rc other_pid 1 "$H" malloc "$S/f1.ndjson" "$S/g0.ndjson"
check_grep other_pid_msg 'pid 4242 after one of pid 77' "$TMP/err"
check_rc wrong_order 1 "$H" malloc "$S/f2.ndjson" "$S/f1.ndjson"
check_grep wrong_order_msg 'in the order taken' "$TMP/err"

# ---- the join with a heap dump by file:line ----
D=$DATA/ok_ruby3.1_traced.json
# (jq -R ... fromjson?: the fixture has a line jq refuses, which the
# reader salvages; its object has no site)
site=$(jq -rR 'fromjson? | select(.file != null and .line != null) | "\(.file):\(.line)\t\(.memsize // 0)"' "$D" |
	awk -F'\t' '{ m[$1] += $2 } END { for (k in m) print m[k] "\t" k }' | sort -rn | head -1 | cut -f2)
want=$(jq -rR --arg s "$site" 'fromjson? | select(.file != null and "\(.file):\(.line)" == $s) | .memsize // 0' "$D" | awk '{ s += $1 } END { print s }')
nobj=$(jq -rR --arg s "$site" 'fromjson? | select(.file != null and "\(.file):\(.line)" == $s) | 1' "$D" | wc -l | tr -d ' ')
$GEN "$S/j.ndjson" 9 10 "ruby:100:0:$((want + 5000)):$((want + 5000)):$site" "c:1:0:8:8:libc.so.6:x+0x1"
"$H" malloc --dump "$D" -f json "$S/j.ndjson" >"$TMP/j" 2>"$TMP/err"
check join_exit 0 "$?"
check join_memsize "$want $nobj 5000" "$(jq -r --arg s "$site" '.sites[] | select(.site == $s) | "\(.dump_memsize) \(.dump_objects) \(.unexplained)"' "$TMP/j")"
check join_c_site_untouched null "$(jq -r '.sites[] | select(.kind == "c") | .dump_memsize' "$TMP/j")"
"$H" malloc --dump "$D" "$S/j.ndjson" >"$TMP/out" 2>&1
check_grep join_text_columns 'DUMP +ISEQ +UNEXPLAINED' "$TMP/out"

# ---- hostile names, damaged lines, formats ----
$GEN "$S/h.ndjson" 5 10 'ruby:3:0:3000:3000:evil\e[31m\xff.rb:1' --leaks --garbage
"$H" malloc "$S/h.ndjson" >"$TMP/out" 2>"$TMP/err"
check hostile_exit 0 "$?"
if grep -q "$(printf '\033')" "$TMP/out"; then notok hostile_no_raw_esc "a raw ESC in the text"; else ok hostile_no_raw_esc; fi
check_grep hostile_text_escaped 'ruby  evil\\u001b\[31m\\xff\.rb:1$' "$TMP/out"
check_grep hostile_verdict_escaped '^verdict: .* held at evil\\u001b\[31m\\xff\.rb:1:' "$TMP/out"
check_grep damaged_said 'h\.ndjson: 1 damaged line skipped \(the first: line 3\)' "$TMP/err"
check_grep leakscan_text '^leak scan \(last snapshot, glibc, 0\.25 s\): 3 unreached blocks, 3\.1 KB' "$TMP/out"
"$H" malloc -f tsv "$S/h.ndjson" >"$TMP/t" 2>/dev/null
if grep -q "$(printf '\033')" "$TMP/t"; then notok hostile_tsv "a raw ESC in TSV"; else ok hostile_tsv; fi
"$H" malloc -f json "$S/h.ndjson" >"$TMP/j" 2>/dev/null
check hostile_json_exact "$(printf 'evil\033[31m\\\\u00ff.rb:1')" "$(jq -r '.sites[0].site | gsub("\u00ff"; "\\\\u00ff")' "$TMP/j")"
check leaked_json "3 3072" "$(jq -r '"\(.sites[0].leaked_blocks) \(.sites[0].leaked_bytes)"' "$TMP/j")"
check_rc strict_fails 1 "$H" malloc --strict "$S/h.ndjson"
check_grep strict_line 'h\.ndjson:3:[0-9]+: damaged snapshot line' "$TMP/err"
$GEN "$S/v2.ndjson" 5 10 --format 2 "ruby:1:0:8:8:a.rb:1"
check_rc format2 1 "$H" malloc "$S/v2.ndjson"
check_grep format2_msg 'v2\.ndjson: malloc snapshot of format 2: this heapdump reads format 1' "$TMP/err"
$GEN "$S/v0.ndjson" 5 10 --format none "ruby:1:0:8:8:a.rb:1"
check_rc no_format 1 "$H" malloc "$S/v0.ndjson"
check_grep no_format_msg 'without a "format"' "$TMP/err"
check_rc not_a_snapshot 1 "$H" malloc "$D"
check_grep not_a_snapshot_msg 'not a malloc snapshot \(line 1: ' "$TMP/err"
check_rc missing 1 "$H" malloc "$S/nope.ndjson"
"$H" malloc -f json - <"$S/g2.ndjson" >"$TMP/j" 2>"$TMP/err"
check stdin "leak.rb:5 -" "$(jq -r '"\(.sites[0].site) \(.snapshots[0].path)"' "$TMP/j")"
check_rc usage_none 2 "$H" malloc
check_rc usage_format 2 "$H" malloc -f xml "$S/g0.ndjson"
check_rc usage_every_report 2 "$H" malloc --every 5 "$S/g0.ndjson"
check_rc usage_dump_run 2 "$H" malloc --dump "$D" -- true
check_rc usage_dashes_alone 2 "$H" malloc --
check_rc usage_bad_every 2 "$H" malloc --every -1 -- true
check_rc usage_bad_signal 2 "$H" malloc --signal KILL -- true
check_rc help 0 "$H" malloc --help

# ---- run mode, with a stand-in tracker ----
printf 'int hd_stand_in;\n' >"$TMP/stub.c"
cc -shared -fPIC -o "$TMP/stub.so" "$TMP/stub.c"
R=$TMP/run
mkdir -p "$R"
HEAPDUMP_MALLOC_LIBRARY=$TMP/stub.so "$H" malloc -o "$R" --every 2.5 --leaks --signal USR1 -- \
	sh -c 'env | grep -E "^(LD_PRELOAD|HEAPDUMP_MALLOC_)" | grep -v ^HEAPDUMP_MALLOC_LIBRARY= | sort >"$HEAPDUMP_MALLOC_DIR/env"; echo "{}" >"$HEAPDUMP_MALLOC_DIR/heapdump-malloc-$$-0001.ndjson"; exit 3' \
	>"$TMP/out" 2>"$TMP/err"
check run_status 3 "$?"
check run_env "HEAPDUMP_MALLOC_AT_EXIT=1
HEAPDUMP_MALLOC_DIR=$(cd "$R" && pwd -P)
HEAPDUMP_MALLOC_EVERY=2.5
HEAPDUMP_MALLOC_LEAKS=1
HEAPDUMP_MALLOC_SIGNAL=USR1
LD_PRELOAD=$(cd "$TMP" && pwd -P)/stub.so" "$(cat "$R/env")"
check_grep run_listed "^  $(cd "$R" && pwd -P)/heapdump-malloc-[0-9]+-0001\.ndjson$" "$TMP/err"
# a signal sent to heapdump reaches the program
HEAPDUMP_MALLOC_LIBRARY=$TMP/stub.so "$H" malloc -q -o "$R" -- \
	sh -c 'trap "exit 7" TERM; touch "$HEAPDUMP_MALLOC_DIR/up"; while :; do sleep 0.05; done' &
hp=$!
i=0
while [ ! -e "$R/up" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
kill -TERM $hp
wait $hp
check run_signal_forwarded 7 "$?"
check_rc run_cannot_exec 1 env HEAPDUMP_MALLOC_LIBRARY="$TMP/stub.so" "$H" malloc -o "$R" -- "$TMP/no-such-program"
check_grep run_cannot_exec_msg "cannot run '.*no-such-program': No such file" "$TMP/err"
check_rc run_no_library 1 env HEAPDUMP_MALLOC_LIBRARY="$TMP/none.so" "$H" malloc -- true
check_grep run_no_library_msg "HEAPDUMP_MALLOC_LIBRARY names '.*none\.so'" "$TMP/err"
