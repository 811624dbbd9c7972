#!/bin/sh
# tests/ext/attach.sh - heapdump dump --attach: a live ruby that never
# loaded the gem (RUBYLIB unset) writes its own dump at a safe point,
# scheduled through gdb. Per Ruby: a target looping in Ruby code and
# one blocked in sleep (woken by SIGCHLD); the dump is 0600, complete,
# and holds the 1,234 Widgets the target made; the target keeps running
# and exits 0. Then the failures, exit 1 with their message: ptrace
# refused (the target already traced by strace), a process that is not
# Ruby, a process that never reaches a safe point (timeout, nothing left
# behind, nothing written later either), a stopped process, gdb
# missing; exit 2 for usage.
SUITE=ext/attach
. "$(dirname "$0")/lib.sh"
needs gdb gdb
needs strace strace

cat >"$TMP/target.rb" <<'RB'
# ARGV: mode (busy, sleep, nowake), ready file, stop file
class Widget
  def initialize(i)
    @i = i
  end
end
$widgets = Array.new(1234) { |i| Widget.new(i) }
mode, ready, stop = ARGV
class Wake < StandardError; end
trap("USR1") { raise Wake } # the test's way to end a sleep
if mode == "nowake"
  $LOAD_PATH.unshift(File.dirname(stop))
  require "hold"
end
File.write(ready + ".tmp", Process.pid.to_s)
File.rename(ready + ".tmp", ready)
case mode
when "busy"
  n = 0
  deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 60
  until File.exist?(stop) || Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline
    n += 1
  end
when "sleep"
  begin
    sleep # forever: only USR1 ends it
  rescue Wake
  end
when "nowake"
  Hold.gvl(stop) # C, the GVL held, until the stop file appears
  sleep 1 # time for the job, which runs now, to write if it would
end
puts "done #{$widgets.size} #{defined?(HeapDump).inspect}"
RB

# start MODE NAME: the target's pid in $pid, its directory in $dir
start() {
	dir=$TMP/$2
	mkdir -p "$dir"
	env -u RUBYLIB HEAPDUMP_DIR="$dir" ruby "$TMP/target.rb" "$1" "$TMP/$2.ready" "$TMP/$2.stop" \
		>"$TMP/$2.log" 2>&1 &
	pid=$!
	i=0
	while [ ! -f "$TMP/$2.ready" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
}

# finish NAME HOW: ends the target (touch the stop file or USR1), checks it exits 0
finish() {
	case $2 in stop) : >"$TMP/$1.stop" ;; usr1) kill -USR1 "$pid" ;; esac
	i=0
	while kill -0 "$pid" 2>/dev/null && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
	kill -KILL "$pid" 2>/dev/null # never hang the suite
	wait "$pid"
	rc=$?
	if [ $rc -eq 0 ] && grep -qx 'done 1234 nil' "$TMP/$1.log"; then ok "$1/target-exits-normally"; else
		notok "$1/target-exits-normally" "exit $rc, output: $(head -c 300 "$TMP/$1.log")"
	fi
}

# dumped NAME: the checks of a successful attach
dumped() {
	f=$(cat "$TMP/out")
	case $f in "$dir/heapdump-$pid-"*.json) ok "$1/prints-path" ;; *) notok "$1/prints-path" "printed '$f'" ;; esac
	mode=$(stat -c %a "$f" 2>/dev/null)
	check "$1/mode-0600" 600 "$mode"
	if "$HEAPDUMP" stats -q --strict --by class -n 0 --format tsv "$f" >"$TMP/st" 2>"$TMP/st.err"; then
		ok "$1/stats-reads-it"
	else
		notok "$1/stats-reads-it" "$(head -c 300 "$TMP/st.err")"
	fi
	check "$1/widgets-counted" 1234 "$(awk -F'\t' '$1 == "class" && $4 == "Widget" { print $2 }' "$TMP/st")"
	# beside it, the sidecar heapdump dump writes from /proc (no gem ran
	# to write one): the process's memory, man 5 heapdump-dump
	check "$1/sidecar-from-proc" proc "$(jq -r .mem_source "$f.hdmeta" 2>/dev/null)"
	left=$(ls -A "$dir" | grep -v "^heapdump-$pid-.*\.json\(\.hdmeta\)\{0,1\}\$")
	check "$1/nothing-else-left" "" "$left"
	if kill -0 "$pid" 2>/dev/null; then ok "$1/target-still-running"; else notok "$1/target-still-running" "gone"; fi
}

# a target busy in Ruby code
start busy busy
t0=$(date +%s)
check_rc busy/attach 0 "$HEAPDUMP" dump -q --attach --timeout 120 "$pid"
t1=$(date +%s)
dumped busy
# well before --timeout: it reached the safe point, not the deadline
[ $((t1 - t0)) -le 60 ] && ok busy/fast || notok busy/fast "$((t1 - t0)) s"
finish busy stop

# a target blocked in sleep: SIGCHLD wakes it to the safe point
start sleep sleep
t0=$(date +%s)
check_rc sleep/attach 0 "$HEAPDUMP" dump --attach --timeout 120 "$pid"
t1=$(date +%s)
dumped sleep
# well before --timeout: it reached the safe point, not the deadline
[ $((t1 - t0)) -le 60 ] && ok sleep/fast || notok sleep/fast "$((t1 - t0)) s"
check_grep sleep/says-what-it-does "attaching to process $pid with gdb" "$TMP/err"
# again, with -o and --dir: the process writes there, heapdump moves it
mkdir "$TMP/elsewhere"
check_rc sleep/attach-o-dir 0 "$HEAPDUMP" dump -q --attach --dir "$TMP/elsewhere" -o "$TMP/sleep-o.json" "$pid"
check sleep/o-printed "$TMP/sleep-o.json" "$(cat "$TMP/out")"
check_rc sleep/o-strict 0 "$HEAPDUMP" stats -q --strict "$TMP/sleep-o.json"
check sleep/o-dir-empty "" "$(ls -A "$TMP/elsewhere")"
finish sleep usr1

# ptrace refused: the target is already traced (by strace), so gdb's
# PTRACE_ATTACH fails with EPERM
start busy traced
strace -p "$pid" -o /dev/null 2>/dev/null &
tracer=$!
i=0
while [ "$(awk '/^TracerPid:/ { print $2 }' "/proc/$pid/status")" = 0 ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
check_rc traced/exit-1 1 "$HEAPDUMP" dump -q --attach --timeout 10 "$pid"
check_grep traced/not-permitted "cannot attach to process $pid: ptrace is not permitted" "$TMP/err"
check_grep traced/names-tracer "already traced by process $tracer" "$TMP/err"
check_grep traced/names-remedies "CAP_SYS_PTRACE" "$TMP/err"
check traced/nothing-left "" "$(ls -A "$dir")"
kill "$tracer"
wait "$tracer" 2>/dev/null
finish traced stop

# not a Ruby process
sleep 30 &
sl=$!
check_rc notruby/exit-1 1 "$HEAPDUMP" dump -q --attach --dir "$TMP" "$sl"
check_grep notruby/message "process $sl \\(sleep\\) is not a Ruby process" "$TMP/err"
kill "$sl"
wait "$sl" 2>/dev/null
if ls -A "$TMP" | grep -q '^\.heapdump'; then notok notruby/nothing-left "$(ls -A "$TMP")"; else ok notruby/nothing-left; fi

# never at a safe point within --timeout: its main thread is in C code
# that holds the GVL (a tiny extension, built here for this Ruby) until
# the stop file appears
cat >"$TMP/hold.c" <<'C'
#include <ruby.h>
#include <time.h>
#include <unistd.h>
static VALUE gvl(VALUE self, VALUE stop)
{
	struct timespec ts = { 0, 20000000 };
	while (access(StringValueCStr(stop), F_OK) != 0)
		nanosleep(&ts, NULL);
	return Qnil;
}
void Init_hold(void)
{
	rb_define_module_function(rb_define_module("Hold"), "gvl", gvl, 1);
}
C
if ! (cd "$TMP" && env -u RUBYLIB ruby -rmkmf -e 'create_makefile("hold")' >mkmf.out 2>&1 && make >>mkmf.out 2>&1); then
	notok nowake/build-hold "$(tail -5 "$TMP/mkmf.out")"
fi
start nowake nowake
check_rc nowake/exit-1 1 "$HEAPDUMP" dump -q --attach --timeout 1 "$pid"
check_grep nowake/timeout "process $pid did not reach a safe point in 1 s" "$TMP/err"
check nowake/nothing-left "" "$(ls -A "$dir")"
# asked again while the first job waits: 3.1's register_one keeps the
# pending job (its request is gone, so it will write nothing) and says
# so; 3.3 on replace its argument, and time out the same way
check_rc nowake/again-exit-1 1 "$HEAPDUMP" dump -q --attach --timeout 1 "$pid"
case $HD_RUBY_VERSION in
3.1.*) check_grep nowake/again-message "a dump asked for earlier is still waiting for its safe point" "$TMP/err" ;;
*) check_grep nowake/again-message "process $pid did not reach a safe point in 1 s" "$TMP/err" ;;
esac
check nowake/again-nothing-left "" "$(ls -A "$dir")"
finish nowake stop
# it went on and ran the job, which found no request: still nothing
check nowake/nothing-later "" "$(ls -A "$dir")"

# heapdump killed while it waits (SIGTERM): the request goes with it
start nowake term
"$HEAPDUMP" dump -q --attach --timeout 60 "$pid" 2>"$TMP/term.err" &
hd=$!
i=0 # until gdb has come and gone
while [ "$(awk '/^TracerPid:/ { print $2 }' "/proc/$pid/status")" = 0 ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
while [ "$(awk '/^TracerPid:/ { print $2 }' "/proc/$pid/status")" != 0 ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
sleep 0.3
check term/request-while-waiting 1 "$(ls -A "$dir" | grep -c '\.attach$')"
kill -TERM "$hd"
wait "$hd"
check term/killed-by-term 143 "$?"
check term/nothing-left "" "$(ls -A "$dir")"
finish term stop
check term/nothing-later "" "$(ls -A "$dir")"

# a stopped process (kill -STOP, ^Z) cannot run the job: refused before gdb
start sleep stopped
kill -STOP "$pid"
i=0
while ! grep -q '^State:.*stopped' "/proc/$pid/status" && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
check_rc stopped/exit-1 1 "$HEAPDUMP" dump -q --attach --timeout 5 "$pid"
check_grep stopped/message "process $pid is stopped.*kill -CONT" "$TMP/err"
check stopped/nothing-left "" "$(ls -A "$dir")"
kill -CONT "$pid"
finish stopped usr1

# gdb missing (PATH without it)
start sleep nogdb
check_rc nogdb/exit-1 1 env PATH=/nonexistent "$HEAPDUMP" dump -q --attach "$pid"
check_grep nogdb/message "gdb is not installed.*apt-get install gdb" "$TMP/err"
check nogdb/nothing-left "" "$(ls -A "$dir")"
finish nogdb usr1

# usage errors
check_rc usage/signal 2 "$HEAPDUMP" dump --attach --signal USR1 1
check_grep usage/signal-message "--signal does not apply to --attach" "$TMP/err"
check_rc usage/no-pid 2 "$HEAPDUMP" dump --attach
check_rc usage/no-such-process 1 "$HEAPDUMP" dump -q --attach 999999999
check_grep usage/no-such-process-message "no such process: 999999999" "$TMP/err"
