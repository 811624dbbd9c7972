#!/bin/sh
# faults.sh - I/O faults while writing. Every command that writes a file
# runs under build/tests/faultio.so (tests/faults/faultio.c), which makes
# the Nth write, fsync, close or rename fail, or the disk fill up after N
# bytes, with ENOSPC or EIO. Each faulty run must exit 1 with a message
# naming the error, leave nothing under the output's name and no
# temporary file beside it, and leave the input byte for byte as it was
# (for --in-place: the original file).
. "$(dirname "$0")/../lib.sh"
needs awk mawk

faultio_shim
# the binary must load the shim: dynamically linked against libc (the
# binary itself, not the wrapper of make check-valgrind)
if ! ldd "${HEAPDUMP_REAL:-$HEAPDUMP}" 2>/dev/null | grep -q 'libc\.so'; then
	notok dynamic "$HEAPDUMP is not linked dynamically against libc"
	exit 1
fi
# ASan wants to come first; the shim only wraps libc's calls. What
# Graphviz's font stack keeps until exit (render) is not ours.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0:fast_unwind_on_malloc=0"
LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$TOP/tests/cli/graphviz.supp:print_suppressions=0"
export ASAN_OPTIONS LSAN_OPTIONS

# A traced dump of N objects: ROOT lines, a class Foo, strings, arrays
# and hashes referencing each other, generation i/100.
gen() {
	awk -v n="$1" 'BEGIN {
		printf "{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":[\"0x1000\", \"0x1028\"]}\n"
		printf "{\"type\":\"ROOT\", \"root\":\"global_tbl\", \"references\":[\"0x%x\"]}\n", 4096 + 40 * int(n / 2)
		printf "{\"address\":\"0x1000\", \"type\":\"CLASS\", \"class\":\"0x1028\", \"name\":\"Foo\", \"references\":[\"0x1028\"], \"memsize\":400}\n"
		printf "{\"address\":\"0x1028\", \"type\":\"CLASS\", \"class\":\"0x1028\", \"name\":\"Class\", \"memsize\":400}\n"
		for (i = 2; i < n; i++) {
			a = 4096 + 40 * i
			t = i % 3 == 0 ? "STRING" : i % 3 == 1 ? "ARRAY" : "OBJECT"
			refs = sprintf("\"0x%x\", \"0x%x\"", 4096 + 40 * ((i * 7 + 3) % n), 4096 + 40 * ((i + 1) % n))
			val = t == "STRING" ? sprintf(", \"bytesize\":6, \"value\":\"str%03d\"", i % 1000) : ""
			printf "{\"address\":\"0x%x\", \"type\":\"%s\", \"class\":\"0x1000\"%s, \"references\":[%s], \"file\":\"app/m%d.rb\", \"line\":%d, \"generation\":%d, \"memsize\":40}\n", a, t, val, refs, i % 5, i % 50, int(i / 100)
		}
	}'
}

mkdir -p "$TMP/in" "$TMP/o"
gen 600 >"$TMP/in/before.json"
gen 1200 >"$TMP/in/after.json"
IN="$TMP/in/after.json"
"$HEAPDUMP" diff -q "$TMP/in/before.json" "$IN" -o "$TMP/in/diff.json" \
	>/dev/null 2>&1 || notok setup "diff of the generated pair failed"
sums() { cat "$TMP"/in/* | cksum; }
before=$(sums)

O="$TMP/o"
# name|output|command (@OUT@: the output path)
CMDS="index|out.hds|index -q $IN -o @OUT@
replace-class|out.json|replace-class -q $IN -o @OUT@
diff|out.json|diff -q $TMP/in/before.json $IN -o @OUT@
interface-with|out.json|interface-with -q $IN $TMP/in/diff.json -o @OUT@
roots-of|out.json|roots-of -q $IN --type STRING --generation 5.. -o @OUT@
subgraph-of|out.json|subgraph-of -q $IN --address 0x1000 -o @OUT@
to-gml|out.gml|to-gml -q $IN -o @OUT@
to-dot|out.dot|to-dot -q $IN -o @OUT@
render|out.svg|render -q $IN --type STRING --generation 11 -o @OUT@"

# count VAR FILE: a field of the shim's report
count() { sed -n "s/.* $1 \([0-9]*\).*/\1/p; s/^$1 \([0-9]*\).*/\1/p" "$2" | head -1; }

# faulty NAME OUT ERRNO ENV... -- ARGS: one run under a fault
faulty() {
	fname=$1 out=$2 errno=$3
	shift 3
	envs=""
	while [ "$1" != "--" ]; do envs="$envs $1"; shift; done
	shift
	rm -f "$TMP/report"
	env LD_PRELOAD="$SHIM" FAULTIO_REPORT="$TMP/report" \
		FAULTIO_ERRNO="$errno" $envs "$HEAPDUMP" "$@" \
		>"$TMP/out" 2>"$TMP/err"
	rc=$?
	case $errno in
	EIO) msg="Input/output error" ;;
	*) msg="No space left on device" ;;
	esac
	why=""
	[ "$rc" = 1 ] || why="exit $rc, expected 1"
	[ -z "$why" ] && ! grep -q "^heapdump: cannot .*: $msg\$" "$TMP/err" &&
		why="no 'cannot ...: $msg' message"
	[ -z "$why" ] && [ "$(count faults "$TMP/report")" -ge 1 ] 2>/dev/null ||
		why="${why:-the shim injected no fault}"
	[ -z "$why" ] && [ -e "$out" ] && why="'$(basename "$out")' exists"
	[ -z "$why" ] && [ -n "$(ls -A "$O")" ] &&
		why="left behind: $(ls -A "$O" | tr '\n' ' ')"
	if [ -z "$why" ]; then ok "$fname"; else
		notok "$fname" "$why; stderr: $(head -c 300 "$TMP/err")"
	fi
	rm -rf "$O" && mkdir -p "$O"
}

# The values of N to try for a count c: 1, 2, the middle, the last.
sweep() {
	c=$1
	[ "$c" -ge 1 ] || return 0
	echo 1
	[ "$c" -ge 2 ] && echo 2
	[ "$c" -ge 5 ] && echo $((c / 2))
	[ "$c" -ge 3 ] && echo "$c"
}

runs=0
printf '%s\n' "$CMDS" | while IFS='|' read -r name file cmd; do
	out="$O/$file"
	args=$(printf '%s' "$cmd" | sed "s|@OUT@|$out|")
	# the clean run: succeeds, and gives the counts to sweep over
	env LD_PRELOAD="$SHIM" FAULTIO_REPORT="$TMP/report" \
		"$HEAPDUMP" $args >/dev/null 2>"$TMP/err"
	rc=$?
	if [ $rc != 0 ] || [ ! -s "$out" ]; then
		notok "$name/clean" "exit $rc: $(head -c 300 "$TMP/err")"
		continue
	fi
	ok "$name/clean"
	w=$(count writes "$TMP/report")
	bytes=$(count bytes "$TMP/report")
	f=$(count fsyncs "$TMP/report")
	c=$(count closes "$TMP/report")
	r=$(count renames "$TMP/report")
	# every file written is synced, closed and renamed once
	check "$name/fsync-close-rename" "1 1 1" "$f $c $r"
	rm -rf "$O" && mkdir -p "$O"
	e=ENOSPC
	for n in $(sweep "$w"); do
		faulty "$name/write-$n-$e" "$out" $e FAULTIO_OP=write \
			FAULTIO_NTH="$n" -- $args
		[ $e = ENOSPC ] && e=EIO || e=ENOSPC
	done
	for n in 0 1 $((bytes / 2)) $((bytes - 1)); do
		faulty "$name/full-at-$n-$e" "$out" $e FAULTIO_OP=write \
			FAULTIO_BYTES="$n" -- $args
		[ $e = ENOSPC ] && e=EIO || e=ENOSPC
	done
	faulty "$name/fsync-EIO" "$out" EIO FAULTIO_OP=fsync FAULTIO_NTH=1 \
		-- $args
	faulty "$name/close-EIO" "$out" EIO FAULTIO_OP=close FAULTIO_NTH=1 \
		-- $args
	faulty "$name/rename-ENOSPC" "$out" ENOSPC FAULTIO_OP=rename \
		FAULTIO_NTH=1 -- $args
done

# --in-place: the original stays byte-identical, and alone in its folder
for spec in "write FAULTIO_NTH=1 ENOSPC" "write FAULTIO_BYTES=10000 EIO" \
	"fsync FAULTIO_NTH=1 EIO" "close FAULTIO_NTH=1 EIO" \
	"rename FAULTIO_NTH=1 ENOSPC"; do
	set -- $spec
	rm -rf "$TMP/ip" && mkdir -p "$TMP/ip"
	cp "$IN" "$TMP/ip/d.json"
	env LD_PRELOAD="$SHIM" FAULTIO_OP="$1" "$2" FAULTIO_ERRNO="$3" \
		"$HEAPDUMP" replace-class -q --in-place "$TMP/ip/d.json" \
		>/dev/null 2>"$TMP/err"
	rc=$?
	n="in-place/$1-$3"
	if [ $rc != 1 ]; then
		notok "$n" "exit $rc, expected 1: $(head -c 300 "$TMP/err")"
	elif ! cmp -s "$IN" "$TMP/ip/d.json"; then
		notok "$n" "the original changed"
	elif [ "$(ls -A "$TMP/ip")" != d.json ]; then
		notok "$n" "left behind: $(ls -A "$TMP/ip" | tr '\n' ' ')"
	else
		ok "$n"
	fi
done
# and without a fault it does rewrite the file
cp "$IN" "$TMP/ip/d.json"
"$HEAPDUMP" replace-class -q --in-place "$TMP/ip/d.json" 2>"$TMP/err"
check in-place/clean "1198 d.json" \
	"$(grep -c '"class":"Foo"' "$TMP/ip/d.json") $(ls -A "$TMP/ip")"

# standard input is spooled to a file in $TMPDIR (commands that read it
# twice): a full disk there is an error, and the spool is removed
for cmd in "roots-of --type STRING" "replace-class"; do
	for n in 1 2; do
		rm -rf "$TMP/spool" && mkdir -p "$TMP/spool"
		env LD_PRELOAD="$SHIM" FAULTIO_OP=write FAULTIO_NTH=$n \
			TMPDIR="$TMP/spool" "$HEAPDUMP" $cmd -q - -o "$O/out.json" \
			<"$IN" >/dev/null 2>"$TMP/err"
		rc=$?
		t="stdin-spool/${cmd%% *}-$n"
		if [ $rc != 1 ] || ! grep -q "No space left on device" "$TMP/err"; then
			notok "$t" "exit $rc: $(head -c 300 "$TMP/err")"
		elif [ -n "$(ls -A "$TMP/spool")$(ls -A "$O")" ]; then
			notok "$t" "left behind: $(ls -A "$TMP/spool") $(ls -A "$O")"
		else
			ok "$t"
		fi
		rm -rf "$O" && mkdir -p "$O"
	done
	# the disk fills in the middle of a write: that write is cut short,
	# the next one fails; the message has the real errno, not "Success"
	rm -rf "$TMP/spool" && mkdir -p "$TMP/spool"
	env LD_PRELOAD="$SHIM" FAULTIO_OP=write FAULTIO_BYTES=1000 \
		TMPDIR="$TMP/spool" "$HEAPDUMP" $cmd -q - -o "$O/out.json" \
		<"$IN" >/dev/null 2>"$TMP/err"
	rc=$?
	t="stdin-spool/${cmd%% *}-cut-short"
	if [ $rc != 1 ] || ! grep -q "No space left on device" "$TMP/err" ||
		grep -q "Success" "$TMP/err"; then
		notok "$t" "exit $rc: $(head -c 300 "$TMP/err")"
	elif [ -n "$(ls -A "$TMP/spool")$(ls -A "$O")" ]; then
		notok "$t" "left behind: $(ls -A "$TMP/spool") $(ls -A "$O")"
	else
		ok "$t"
	fi
	rm -rf "$O" && mkdir -p "$O"
done

# standard output on a full device (/dev/full: a real ENOSPC, no shim)
for cmd in "stats" "to-gml" "to-dot" "replace-class" "roots-of --type STRING" \
	"subgraph-of --address 0x1000" "path --address 0x1028" \
	"interface-with --summary --type STRING"; do
	n="stdout-full/${cmd%% *}"
	"$HEAPDUMP" $cmd -q "$IN" >/dev/full 2>"$TMP/err"
	rc=$?
	if [ $rc = 1 ] && grep -q "No space left on device" "$TMP/err"; then
		ok "$n"
	else
		notok "$n" "exit $rc: $(head -c 300 "$TMP/err")"
	fi
done

check inputs-untouched "$before" "$(sums)"
