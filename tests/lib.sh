# tests/lib.sh - helpers for shell test scripts (sourced).
# Each check prints "ok - <suite>/<name>" or "not ok - <suite>/<name>: why".
set -u
LC_ALL=C
export LC_ALL
: "${TOP:=$(cd "$(dirname "$0")/../.." && pwd)}"
: "${HEAPDUMP:=$TOP/build/heapdump}"
SUITE=${SUITE:-$(basename "$0" .sh)}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# the fixtures: tests/run.sh's copy for the run (HD_DATA), so that what
# a suite writes beside a dump never lands in the source tree
DATA="${HD_DATA:-$TOP/data/dumps}"
# what Graphviz's font stack keeps until exit (report, render, serve's
# drawings load libgvc) is no leak of ours, in a sanitized build
LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$TOP/tests/cli/graphviz.supp:print_suppressions=0"
export LSAN_OPTIONS

# sweep_dumps: the fixtures (data/dumps, plain then gzip) that a sweep
# over every fixture runs on, one a line: every one, or with
# HD_SWEEP=sample (CI's sanitized stage, where a process takes ten
# times as long to start and the sweeps were half its time) the odd ones
# (bad_, edge_, xss_, waste_: where a memory error would hide) and one in
# four of the dumps real Rubies wrote, which resemble one another. The
# normal stage runs every one.
sweep_dumps() {
	sweep_i=0
	for sweep_f in "$DATA"/*.json "$DATA"/*.json.gz; do
		[ -e "$sweep_f" ] || continue
		case ${HD_SWEEP:-all},${sweep_f##*/} in
		all,* | *,bad_* | *,edge_* | *,xss_* | *,waste_*)
			echo "$sweep_f" ;;
		*)
			sweep_i=$((sweep_i + 1))
			[ $((sweep_i % 4)) -eq 1 ] && echo "$sweep_f"
			;;
		esac
	done
}

# loaded CMD...: runs CMD, stdout to $TMP/out and stderr to $TMP/err; rc
# is its exit code and libs the libraries the dynamic loader mapped for
# it (LD_DEBUG=files: linked and dlopen'ed alike), one a line
loaded() {
	rm -f "$TMP"/ld.*
	LD_DEBUG=files LD_DEBUG_OUTPUT="$TMP/ld" "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	libs=$(cat "$TMP"/ld.* 2>/dev/null | sed -n 's/.*file=\([^ ]*\) .*/\1/p' | sort -u)
	rm -f "$TMP"/ld.*
}

# A trio's copies, indexed: TRIO_DIR PREFIX EXT copies DATA's
# PREFIX_{before,after,later}.EXT into TRIO_DIR and indexes each beside
# its copy (TRIO_DIR/{before,after,later}.hds); 1 when an index fails.
index_trio() {
	mkdir -p "$1"
	for w in before after later; do
		cp "$DATA/${2}_$w.$3" "$1/$w.$3"
		"$HD" index -q -o "$1/$w.hds" "$1/$w.$3" || return 1
	done
}

ok() { echo "ok - $SUITE/$1"; }
notok() { echo "not ok - $SUITE/$1: $2"; }

# check NAME EXPECTED ACTUAL
check() {
	if [ "$2" = "$3" ]; then ok "$1"; else
		notok "$1" "expected '$2', got '$(printf '%s' "$3" | head -c 300)'"
	fi
}

# check_rc NAME EXPECTED_RC command...
check_rc() {
	n=$1 want=$2
	shift 2
	"$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	if [ "$rc" = "$want" ]; then ok "$n"; else
		notok "$n" "exit $rc, expected $want; stderr: $(head -c 300 "$TMP/err")"
	fi
}

# check_grep NAME PATTERN FILE: FILE contains a line matching PATTERN
check_grep() {
	if grep -qE -- "$2" "$3"; then ok "$1"; else
		notok "$1" "no line matches /$2/ in $(basename "$3"): $(head -c 300 "$3")"
	fi
}

# faultio_shim: SHIM, the build's tests/faults/faultio.so (the I/O fault
# shim); a missing one fails the suite, saying how to build it
faultio_shim() {
	SHIM="$TOP/$B/tests/faultio.so"
	case $B in /*) SHIM="$B/tests/faultio.so" ;; esac
	if [ ! -f "$SHIM" ]; then
		notok shim "$SHIM is missing: make $B/tests/faultio.so"
		exit 1
	fi
}

# needs CMD PACKAGE: a missing dependency is a failure that says what to install
needs() {
	if ! command -v "$1" >/dev/null 2>&1; then
		notok "needs-$1" "'$1' is missing: apt-get install $2"
		exit 1
	fi
}

# killed_check NAME SIG PID DIR SEEN WAITED: sends SIG to PID (started
# with SIG at its default), waits for it, and passes signal/NAME when it
# died of SIG leaving DIR empty. SEEN empty means the moment to send it
# never came: WAITED says what was awaited. $TMP/err is its stderr.
killed_check() {
	kc_n=$1 kc_sig=$2 kc_pid=$3 kc_dir=$4 kc_seen=$5 kc_waited=$6
	kill -"$kc_sig" "$kc_pid"
	wait "$kc_pid" 2>/dev/null
	kc_rc=$?
	case $kc_sig in INT) kc_want=130 ;; TERM) kc_want=143 ;; *) kc_want=x ;; esac
	if [ -z "$kc_seen" ]; then
		notok "signal/$kc_n" "$kc_waited (exit $kc_rc): $(head -c 200 "$TMP/err")"
	elif [ $kc_rc != "$kc_want" ]; then
		notok "signal/$kc_n" "exit $kc_rc, expected $kc_want (killed by SIG$kc_sig)"
	elif [ -n "$(ls -A "$kc_dir")" ]; then
		notok "signal/$kc_n" "left behind: $(ls -A "$kc_dir" | tr '\n' ' ')"
	else
		ok "signal/$kc_n"
	fi
}

# joined FILE: an `strace -f` log FILE with each call that another
# thread's output cut in two ("NAME(args <unfinished ...>", later
# "<... NAME resumed>rest") printed whole, on one line, where it
# returned; so "= N" and the order of returns can be read from it.
joined() {
	awk '{
		pid = $1
		if ($0 ~ / <unfinished \.\.\.>$/) {
			sub(/ <unfinished \.\.\.>$/, "")
			part[pid] = $0
			next
		}
		if ((pid in part) && $0 ~ /^[0-9]+ +<\.\.\. [a-z0-9_]+ resumed>/) {
			rest = $0
			sub(/^[0-9]+ +<\.\.\. [a-z0-9_]+ resumed> ?/, "", rest)
			# strace pads the result of a resumed call to a column:
			# ")    = 0" is put back as ") = 0", as a whole call prints it
			sub(/^\) +=/, ") =", rest)
			print part[pid] rest
			delete part[pid]
			next
		}
		print
	}
	END { for (p in part) print part[p] " <unfinished ...>" }' "$1"
}

# started SYSCALLS FILE: how many of the calls (an extended regex of
# names, e.g. 'clone3?') an `strace -f` log FILE shows started. A call
# one thread began while another thread's call was being printed shows
# on two lines ("<unfinished ...>", then "<... resumed>"): only the first
# begins with the call's name, so only it is counted.
started() {
	grep -cE "^[0-9]+ +($1)\\(" "$2"
}

# cpu_le NAME SECONDS command...: the command's CPU time (user + system,
# from /usr/bin/time) is at most SECONDS. CPU time, not wall time, so a
# loaded machine does not fail it: what it catches is quadratic work.
# The command's stdout goes to $TMP/out, its stderr to $TMP/err.
cpu_le() {
	n=$1 max=$2
	shift 2
	if [ ! -x /usr/bin/time ]; then
		notok "$n" "/usr/bin/time is missing: apt-get install time"
		return
	fi
	/usr/bin/time -f '%U %S' -o "$TMP/cpu" "$@" >"$TMP/out" 2>"$TMP/err"
	secs=$(awk '{ printf "%d", $1 + $2 + 0.999 }' "$TMP/cpu" | tail -1)
	if [ "$secs" -le "$max" ]; then ok "$n"; else
		notok "$n" "$secs s of CPU, more than $max"
	fi
}

# serve_start NAME TRIES command...: runs a `heapdump serve` command in
# the background (stderr in $TMP/NAME.err, its pid added to PIDS) until
# it prints its URL (then URL, BASE, TOKEN, PORT and SPID are set) or
# exits or TRIES tenths of a second pass (then NAME/start fails, SPID is
# empty and it returns 1).
serve_start() {
	name=$1 tries=$2
	shift 2
	"$@" 2>"$TMP/$name.err" &
	pid=$!
	PIDS="$PIDS $pid"
	SPID=""
	i=0
	while ! grep -q 'serving on' "$TMP/$name.err" 2>/dev/null; do
		i=$((i + 1))
		if [ $i -gt "$tries" ] || ! kill -0 "$pid" 2>/dev/null; then
			notok "$name/start" "no URL on stderr: $(head -c 300 "$TMP/$name.err")"
			return 1
		fi
		sleep 0.1
	done
	URL=$(grep -o 'http://[^ ]*' "$TMP/$name.err" | head -1)
	BASE=${URL%%/?token=*}
	TOKEN=${URL##*token=}
	PORT=${BASE##*:}
	SPID=$pid
}

# second_user: makes ATT (ATT_UID), a local user of the suite's own
# (useradd -M, no home) for the trust tests, with as_att CMD... to run a
# command as that user; the suite's EXIT trap must call
# second_user_remove. Fails the suite, saying why, when it runs as
# another user than root or the user cannot be made: never a skip.
second_user() {
	ATT=hdtrust$$
	if [ "$(id -u)" != 0 ]; then
		notok user "the suite makes a second user (useradd) and must run as root, not as uid $(id -u)"
		exit 1
	fi
	if ! command -v useradd >/dev/null 2>&1 || ! command -v runuser >/dev/null 2>&1; then
		notok user "useradd and runuser are missing: apt-get install passwd util-linux"
		exit 1
	fi
	if ! useradd -M -N -d /nonexistent -s /bin/sh "$ATT" 2>"$TMP/useradd.err"; then
		notok user "cannot create the second user $ATT: $(head -c 300 "$TMP/useradd.err")"
		exit 1
	fi
	ATT_UID=$(id -u "$ATT")
}
second_user_remove() { [ -n "${ATT:-}" ] && userdel -f "$ATT" 2>/dev/null; }
as_att() { runuser -u "$ATT" -- "$@"; }
