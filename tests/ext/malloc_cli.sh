#!/bin/sh
# tests/ext/malloc_cli.sh - heapdump malloc end to end on this Ruby: the
# program run under the tracker by `heapdump malloc -- ruby ...` (found
# beside the heapdump program), its snapshots reported by `heapdump
# malloc SNAP...`:
#  - the article's leak (100,000 x Fiddle.malloc(1024), half freed; on
#    4.0, without Fiddle, the same malloc through HDMTest) named by its
#    line with 51.2 to 52.5 MB live, first in text and JSON; the
#    program's exit status passed through; with --leaks, the report's
#    leak scan line, what it is blind to, and the line's leaked blocks
#  - growth: four HeapDump.malloc_snapshot calls 0.2 s apart, 8.2 MB kept
#    at one line between each: the verdict "grows" names that line with
#    +24.6 MB (within 2%) at every snapshot; the slope within 25% of
#    the growth over the seconds; a loop that frees all it allocates:
#    "no native growth"; the same growth in the snapshots of --every 0.3
#    (24.6 MB over 1.5 s): "grows" at its line, the slope over 1 MB/s
#  - the join: a module_eval loop (3,000 methods) dumped by HeapDump.dump
#    with ObjectSpace's tracing, DUMP.malloc.ndjson beside the dump:
#    `--dump` gives the IMEMO/iseq memsize of the dump at that line, and
#    the live bytes the tracker counts there lie between 1.0 and 2.0
#    times it. Why not equal: the tracker counts every block malloc'd
#    while the line runs and still live (the iseq bodies memsize counts,
#    and the method entries, method tables, inline and call caches,
#    strings' buffers made by that line), and memsize is Ruby's own sum
#    of the iseq's parts, without malloc's headers; the iseqs are the
#    bulk of it, never more than all of it (measured: 1.33x on 3.1)
#  - SIGUSR2 sent to heapdump (not the program): forwarded, the tracker
#    writes a snapshot of reason "signal"
#  - a script whose name holds ESC: its site escaped in the text report
#    and the verdict (no raw ESC), exact in JSON
SUITE=ext/malloc_cli
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/ext/malloc_fixture/common.sh"
H=$HEAPDUMP

if ruby -rfiddle -e 'Fiddle.malloc(1)' >/dev/null 2>&1; then
	req=fiddle alloc=Fiddle.malloc free=Fiddle.free
else
	fixture
	req=hdmtest alloc=HDMTest.malloc free=HDMTest.free
fi

# ---- the article's leak ----
cat >"$TMP/leak.rb" <<RB
require "$req"
ptrs = 100_000.times.map { $alloc(1024) }
ptrs.each_slice(2) { |a, _| $free(a) }
exit 3
RB
mkdir -p "$TMP/l"
timeout 120 "$H" malloc -o "$TMP/l" -- ruby "$TMP/leak.rb" >"$TMP/out" 2>"$TMP/err"
check leak/exit-status 3 "$?"
snap=$(sed -n 's/^  \(.*heapdump-malloc-.*\.ndjson\)$/\1/p' "$TMP/err" | head -1)
if [ -z "$snap" ] || [ ! -f "$snap" ]; then
	notok leak/listed "no snapshot listed: $(head -c 300 "$TMP/err")"
else
	ok leak/listed
	"$H" malloc -f json "$snap" >"$TMP/j" 2>"$TMP/err"
	check leak/first-site "$TMP/leak.rb:2 ruby" "$(jq -r '.sites[0] | "\(.site) \(.kind)"' "$TMP/j")"
	live=$(jq '.sites[0].live_bytes' "$TMP/j")
	if [ "$live" -ge 51200000 ] && [ "$live" -le 52500000 ]; then ok leak/live-51.2-52.5MB; else
		notok leak/live-51.2-52.5MB "live_bytes $live"
	fi
	"$H" malloc "$snap" >"$TMP/out" 2>&1
	check_grep leak/verdict "^verdict: the most native memory is held at $TMP/leak\\.rb:2: 5[12]\\.[0-9] MB live" "$TMP/out"
fi

# the same with --leaks: the report's leak scan (Fiddle.malloc's
# addresses are Integers, which the scan is blind to: the kept half
# reads as unreached, as the scan's "blind" line says)
mkdir -p "$TMP/lk"
timeout 120 "$H" malloc -q --leaks -o "$TMP/lk" -- ruby "$TMP/leak.rb" >"$TMP/out" 2>"$TMP/err"
check leaks/exit-status 3 "$?"
snap=$(ls "$TMP"/lk/heapdump-malloc-*.ndjson 2>/dev/null | head -1)
"$H" malloc "$snap" >"$TMP/out" 2>&1
check_grep leaks/scan-line '^leak scan \(last snapshot, glibc, [0-9.]+ s\): [0-9,]+ unreached blocks' "$TMP/out"
check_grep leaks/blind '^  blind to: .*addresses held only as Ruby Integers' "$TMP/out"
"$H" malloc -f json "$snap" >"$TMP/j" 2>&1
check leaks/site-has-leaked true "$(jq --arg s "$TMP/leak.rb:2" '[.sites[] | select(.site == $s) | .leaked_blocks > 0] | .[0]' "$TMP/j")"

# ---- growth, and a flat loop, through the gem's API ----
cat >"$TMP/grow.rb" <<RB
require "heapdump"
require "$req"
keep = []
4.times do |k|
  keep.concat(2_000.times.map { $alloc(4096) }) if k > 0
  HeapDump.malloc_snapshot(File.join(ARGV[0], "grow-#{k}.ndjson"))
  sleep 0.2
end
RB
cat >"$TMP/flat.rb" <<RB
require "heapdump"
require "$req"
3.times do |k|
  2_000.times.map { $alloc(4096) }.each { |p| $free(p) }
  HeapDump.malloc_snapshot(File.join(ARGV[0], "flat-#{k}.ndjson"))
  sleep 0.1
end
RB
mkdir -p "$TMP/g"
timeout 60 "$H" malloc -q -o "$TMP/g" -- ruby "$TMP/grow.rb" "$TMP/g" >"$TMP/out" 2>"$TMP/err"
check grow/exit 0 "$?"
timeout 60 "$H" malloc -q -o "$TMP/g" -- ruby "$TMP/flat.rb" "$TMP/g" >"$TMP/out" 2>"$TMP/err"
check flat/exit 0 "$?"
"$H" malloc -f json "$TMP"/g/grow-[0123].ndjson >"$TMP/j" 2>"$TMP/err"
check grow/judgement "grows $TMP/grow.rb:5 true" "$(jq -r '"\(.judgement) \(.sites[0].site) \(.sites[0].grows_every_step)"' "$TMP/j")"
if jq -e '.sites[0].growth | . >= 24576000 * 0.98 and . <= 24576000 * 1.02' "$TMP/j" >/dev/null; then ok grow/growth-24.6MB; else
	notok grow/growth-24.6MB "growth $(jq '.sites[0].growth' "$TMP/j")"
fi
if jq -e '(.sites[0].growth / (.snapshots[3].time - .snapshots[0].time)) as $r | .sites[0].slope >= $r * 0.75 and .sites[0].slope <= $r * 1.25' "$TMP/j" >/dev/null; then ok grow/slope; else
	notok grow/slope "slope $(jq '.sites[0].slope' "$TMP/j"), growth $(jq '.sites[0].growth' "$TMP/j") over $(jq '.snapshots[3].time - .snapshots[0].time' "$TMP/j") s"
fi
"$H" malloc "$TMP"/g/grow-[0123].ndjson >"$TMP/out" 2>&1
check_grep grow/verdict "^verdict: native memory grows at $TMP/grow\\.rb:5: \\+2[45]\\.[0-9] MB live from the first snapshot to the last \\(4 snapshots over [0-9.]+ s, [0-9.]+ MB/s, at every snapshot\\)" "$TMP/out"
# the same growth in the snapshots of --every, as a user takes them
cat >"$TMP/tick.rb" <<RB
require "$req"
keep = []
6.times do
  keep.concat(1_000.times.map { $alloc(4096) })
  sleep 0.25
end
RB
mkdir -p "$TMP/iv"
timeout 60 "$H" malloc -q --every 0.3 -o "$TMP/iv" -- ruby "$TMP/tick.rb" >"$TMP/out" 2>"$TMP/err"
check every/exit 0 "$?"
n=$(ls "$TMP"/iv/heapdump-malloc-*.ndjson 2>/dev/null | wc -l | tr -d ' ')
if [ "$n" -ge 3 ]; then ok every/snapshots; else notok every/snapshots "$n snapshots: $(head -c 300 "$TMP/err")"; fi
"$H" malloc -f json "$TMP"/iv/heapdump-malloc-*.ndjson >"$TMP/j" 2>"$TMP/err"
check every/verdict "grows $TMP/tick.rb:4" "$(jq -r '"\(.judgement) \(.sites[0].site)"' "$TMP/j")"
if jq -e '.sites[0].slope > 1000000' "$TMP/j" >/dev/null; then ok every/slope; else
	notok every/slope "slope $(jq '.sites[0].slope' "$TMP/j")"
fi
"$H" malloc "$TMP"/g/flat-[012].ndjson >"$TMP/out" 2>&1
check_grep flat/verdict "^verdict: no native growth: the tracked live bytes went from .* over 3 snapshots" "$TMP/out"

# ---- module_eval: live bytes at the line against the dump's iseqs ----
cat >"$TMP/meval.rb" <<'RB'
require "heapdump"
require "objspace"
ObjectSpace.trace_object_allocations_start
module M; end
3000.times do |i|
  M.module_eval("def m#{i}(a, b); x = [a, b, #{i}]; x.map { |v| v.to_s + 'y' }.join(','); end")
end
GC.start
HeapDump.dump(ARGV[0])
RB
mkdir -p "$TMP/m"
timeout 60 "$H" malloc -q -o "$TMP/m" -- ruby "$TMP/meval.rb" "$TMP/m/d.json" >"$TMP/out" 2>"$TMP/err"
check meval/exit 0 "$?"
if [ ! -f "$TMP/m/d.json.malloc.ndjson" ]; then
	notok meval/sidecar "no d.json.malloc.ndjson: $(ls "$TMP/m") $(head -c 300 "$TMP/err")"
else
	"$H" malloc -f json --dump "$TMP/m/d.json" "$TMP/m/d.json.malloc.ndjson" >"$TMP/j" 2>"$TMP/err"
	s="$TMP/meval.rb:6"
	iseq=$(jq --arg s "$s" '.sites[] | select(.site == $s) | .dump_iseq_memsize' "$TMP/j")
	want=$("$H" stats --by location,class -n 0 -f json "$TMP/m/d.json" 2>/dev/null |
		jq --arg s "$s" '[.groupings[0].rows[] | select(.location == $s and .class == "IMEMO/iseq") | .memsize] | add // 0')
	check meval/iseq-memsize-is-stats "$want" "$iseq"
	live=$(jq --arg s "$s" '.sites[] | select(.site == $s) | .live_bytes' "$TMP/j")
	if [ -n "$iseq" ] && [ "$iseq" -gt 1000000 ] && [ "$live" -ge "$iseq" ] && [ "$live" -le $((2 * iseq)) ]; then
		ok "meval/live-1.0-2.0x-iseq"
	else
		notok "meval/live-1.0-2.0x-iseq" "live $live, iseq memsize $iseq"
	fi
	echo "# meval: live $live B at the line, IMEMO/iseq memsize $iseq B"
fi

# ---- SIGUSR2 sent to heapdump reaches the tracker in the program ----
cat >"$TMP/wait.rb" <<'RB'
File.write(ARGV[0], "up")
sleep 0.05 until File.exist?(ARGV[1])
RB
mkdir -p "$TMP/sg"
"$H" malloc -q -o "$TMP/sg" -- ruby "$TMP/wait.rb" "$TMP/up" "$TMP/stop" >"$TMP/sg.out" 2>&1 &
hp=$!
i=0
while [ ! -e "$TMP/up" ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
kill -USR2 $hp
i=0
while [ $i -lt 200 ]; do
	sig=$(grep -l '"reason":"signal"' "$TMP"/sg/heapdump-malloc-*.ndjson 2>/dev/null | head -1)
	[ -n "$sig" ] && break
	sleep 0.05
	i=$((i + 1))
done
touch "$TMP/stop"
wait $hp
check signal/exit 0 "$?"
if [ -n "$sig" ]; then ok signal/forwarded-snapshot; else
	notok signal/forwarded-snapshot "no signal snapshot: $(ls "$TMP/sg") $(head -c 300 "$TMP/sg.out")"
fi
check signal/reported "signal" "$("$H" malloc -f json "$sig" 2>/dev/null | jq -r '.snapshots[0].reason')"

# ---- a script named with ESC ----
esc=$(printf '\033')
f="$TMP/ev${esc}il.rb"
printf 'require "%s"\n$k = 2_000.times.map { %s(1000) }\n' "$req" "$alloc" >"$f"
mkdir -p "$TMP/e"
timeout 60 "$H" malloc -q -o "$TMP/e" -- ruby "$f" >"$TMP/out" 2>"$TMP/err"
check esc/exit 0 "$?"
snap=$(ls "$TMP"/e/heapdump-malloc-*.ndjson | head -1)
"$H" malloc --top 0 "$snap" >"$TMP/out" 2>&1
if grep -q "$esc" "$TMP/out"; then notok esc/no-raw-esc "a raw ESC in the report"; else ok esc/no-raw-esc; fi
check_grep esc/site-escaped "ruby  $TMP/ev\\\\u001bil\\.rb:2\$" "$TMP/out"
"$H" malloc -f json --top 0 "$snap" >"$TMP/j" 2>&1
check esc/json-exact 1 "$(jq --arg s "$f:2" '[.sites[] | select(.site == $s)] | length' "$TMP/j")"
