#!/bin/sh
# tests/ext/signal.sh - dumping a running process on a signal: a ruby
# child with require "heapdump/signal" keeps serving while its forked
# children dump; heapdump dump PID sends the signal and waits; exit
# codes 0, 1 (no such process, timeout) and 2 (usage).
SUITE=ext/signal
. "$(dirname "$0")/lib.sh"

mkdir "$TMP/sig" "$TMP/other"
# the server: counts ticks into a file; at most 120 s
cat >"$TMP/server.rb" <<'RB'
require "heapdump/signal"
HeapDump.on_signal("USR2", dir: ARGV[1])
$data = Array.new(20_000) { |i| "item #{i}" }
# a worker forked after the handler was installed (a preforking server)
worker = fork do
  File.write(ARGV[0] + ".w.tmp", Process.pid.to_s)
  File.rename(ARGV[0] + ".w.tmp", ARGV[0] + ".worker")
  sleep 120
end
at_exit { Process.kill("TERM", worker) rescue nil }
File.write(ARGV[0] + ".tmp", Process.pid.to_s)
File.rename(ARGV[0] + ".tmp", ARGV[0])
t = 0
1200.times do
  t += 1
  File.write(ARGV[0] + ".t", t.to_s)
  File.rename(ARGV[0] + ".t", ARGV[0] + ".ticks")
  sleep 0.1
end
RB
HEAPDUMP_DIR="$TMP/sig" ruby "$TMP/server.rb" "$TMP/ready" "$TMP/other" 2>"$TMP/server.err" &
server=$!
i=0
while [ ! -f "$TMP/ready" ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
pid=$(cat "$TMP/ready" 2>/dev/null)
check server/started "$server" "$pid"

# kill -URG: a complete dump appears under the known name
kill -URG "$pid"
i=0
f=""
while [ -z "$f" ] && [ $i -lt 300 ]; do
	sleep 0.1
	i=$((i + 1))
	f=$(ls "$TMP/sig" | grep -E "^heapdump-$pid-[0-9T-]+-[0-9a-f]{16}\.json$" | head -1)
done
if [ -n "$f" ]; then ok urg/dump-appears; else notok urg/dump-appears "nothing in $TMP/sig after 30 s: $(cat "$TMP/server.err")"; fi
if [ -n "$f" ] && ruby -rjson -e 'File.foreach(ARGV[0]) { |l| JSON.parse(l) }' "$TMP/sig/$f" 2>"$TMP/err"; then
	ok urg/every-line-json
else
	notok urg/every-line-json "$(head -c 300 "$TMP/err")"
fi
check_grep urg/has-the-data '"value":"item 19999"' "$TMP/sig/$f"
[ -f "$TMP/sig/$f.hdmeta" ] && ok urg/sidecar || notok urg/sidecar "no $f.hdmeta"
t1=$(cat "$TMP/ready.ticks")
sleep 0.5
t2=$(cat "$TMP/ready.ticks")
if kill -0 "$pid" 2>/dev/null && [ "$t2" -gt "$t1" ]; then ok urg/parent-keeps-serving; else
	notok urg/parent-keeps-serving "alive? ticks $t1 -> $t2"
fi

# heapdump dump PID -o FILE
check_rc cli/dump-o 0 "$HEAPDUMP" dump -q --timeout 60 -o "$TMP/out.json" "$pid"
check cli/prints-path "$TMP/out.json" "$(cat "$TMP/out")"
check_rc cli/output-strict 0 "$HEAPDUMP" stats -q --strict "$TMP/out.json"
[ -f "$TMP/out.json.hdmeta" ] && ok cli/sidecar-moved || notok cli/sidecar-moved "no out.json.hdmeta"
check_grep cli/stats-process-section '^process +pid '"$pid" "$TMP/out" 2>/dev/null || {
	"$HEAPDUMP" stats -q "$TMP/out.json" >"$TMP/st"
	check_grep cli/stats-process-section '^process +pid '"$pid" "$TMP/st"
}
# without -o: the path in the process's directory (found from its environment)
check_rc cli/dump-in-place 0 "$HEAPDUMP" dump -q "$pid"
got=$(cat "$TMP/out")
case $got in "$TMP/sig/heapdump-$pid-"*.json) ok cli/path-in-dir ;; *) notok cli/path-in-dir "printed '$got'" ;; esac
# another signal and directory, both given
check_rc cli/signal-and-dir 0 "$HEAPDUMP" dump -q --signal SIGUSR2 --dir "$TMP/other" "$pid"
case $(cat "$TMP/out") in "$TMP/other/heapdump-$pid-"*.json) ok cli/signal-and-dir-path ;; *) notok cli/signal-and-dir-path "printed '$(cat "$TMP/out")'" ;; esac
if ls -a "$TMP/sig" "$TMP/other" | grep -q '^\.heapdump'; then notok no-temporary-left "$(ls -a "$TMP/sig")"; else ok no-temporary-left; fi

# a process forked after on_signal answers too
i=0
while [ ! -f "$TMP/ready.worker" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
worker=$(cat "$TMP/ready.worker" 2>/dev/null)
check_rc cli/forked-worker 0 "$HEAPDUMP" dump -q --timeout 60 -o "$TMP/worker.json" "${worker:-0}"
check_rc cli/forked-worker-strict 0 "$HEAPDUMP" stats -q --strict "$TMP/worker.json"
kill -0 "$pid" 2>/dev/null && kill -0 "$worker" 2>/dev/null && ok still-running || notok still-running "server or worker died"

# failures
sleep 30 &
sleeper=$!
check_rc cli/timeout 1 "$HEAPDUMP" dump -q --timeout 1 --dir "$TMP/sig" "$sleeper"
check_grep cli/timeout-message 'no dump from process' "$TMP/err"
kill "$sleeper" 2>/dev/null
check_rc cli/no-such-process 1 "$HEAPDUMP" dump -q 999999999
check_grep cli/no-such-process-message 'no such process' "$TMP/err"
check_rc cli/no-pid 2 "$HEAPDUMP" dump
check_rc cli/bad-pid 2 "$HEAPDUMP" dump 12x
check_rc cli/bad-signal 2 "$HEAPDUMP" dump --signal NOPE "$pid"
check_rc cli/missing-dir 1 "$HEAPDUMP" dump -q --dir "$TMP/none" "$pid"

kill "$pid" 2>/dev/null
wait "$server" 2>/dev/null
exit 0
