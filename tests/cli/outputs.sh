#!/bin/sh
# outputs.sh - where outputs go. Every output of every command follows
# one rule (man 1 heapdump, OUTPUTS): a device or a FIFO is written in
# place and never replaced (a full device is an error); a symbolic link
# is followed and never replaced; only a regular file (or a new one) is
# written to a temporary file renamed over it. No output may be one of
# the command's inputs, a store's source dump, or a link to one (exit 2).
# SIGINT and SIGTERM leave no temporary file behind, and the exit status
# still says which signal killed the command. heapdump dump moves a dump
# across file systems without losing the file it replaces.
. "$(dirname "$0")/../lib.sh"
needs jq jq
needs mkfifo coreutils

HD=$HEAPDUMP
LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$TOP/tests/cli/graphviz.supp:print_suppressions=0"
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0"
export LSAN_OPTIONS ASAN_OPTIONS
faultio_shim
# the shim wraps libc's calls: ASan must tolerate coming second
SHIM_ASAN="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"

IN="$TMP/in/after.json"
mkdir -p "$TMP/in" "$TMP/o"
setup_inputs() {
	cp "$DATA/leak_before.json" "$TMP/in/before.json"
	cp "$DATA/leak_after.json" "$IN"
	cp "$DATA/leak_later.json" "$TMP/in/later.json"
	gzip -c "$DATA/leak_before.json" >"$TMP/in/before.json.gz"
	"$HD" diff -q "$TMP/in/before.json" "$IN" -o "$TMP/in/diff.json" >/dev/null 2>&1
	"$HD" index -q "$IN" -o "$TMP/in/after.hds" 2>/dev/null
}
setup_inputs
"$HD" diff -q "$TMP/in/before.json" "$IN" -o "$TMP/in/diff.json" >/dev/null 2>&1 ||
	notok setup "diff of the leak fixtures failed"
"$HD" index -q "$IN" -o "$TMP/in/after.hds" 2>/dev/null ||
	notok setup "index of the leak fixture failed"
sums() { cat "$TMP"/in/* | cksum; }
before=$(sums)

# name|command (@OUT@: the output): every command that writes a file
CMDS="index|index -q $IN -o @OUT@
replace-class|replace-class -q $IN -o @OUT@
diff|diff -q $TMP/in/before.json $IN -o @OUT@
interface-with|interface-with -q $IN $TMP/in/diff.json -o @OUT@
roots-of|roots-of -q $IN --class Request -o @OUT@
subgraph-of|subgraph-of -q $IN --class Request -o @OUT@
to-gml|to-gml -q $IN --class Request -o @OUT@
to-dot|to-dot -q $IN --class Request -o @OUT@
render|render -q $IN --class Request --format svg -o @OUT@
report|report -q $TMP/in/before.json $IN -o @OUT@"

run_cmd() { # run_cmd CMD OUT: the command with its output
	args=$(printf '%s' "$1" | sed "s|@OUT@|$2|")
	"$HD" $args
}

# ---- devices: written in place, never replaced ----
# As root, the devices are private copies (mknod): a command that
# replaced its output would otherwise replace the system's /dev/null.
if mknod "$TMP/null" c 1 3 2>/dev/null && mknod "$TMP/full" c 1 7 2>/dev/null; then
	NULL=$TMP/null FULL=$TMP/full
else
	NULL=/dev/null FULL=/dev/full
fi
printf '%s\n' "$CMDS" | while IFS='|' read -r name cmd; do
	run_cmd "$cmd" "$NULL" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	if [ $rc = 0 ] && [ -c "$NULL" ]; then
		ok "null/$name"
	else
		notok "null/$name" "exit $rc, $(ls -l "$NULL"): $(head -c 200 "$TMP/err")"
	fi
	run_cmd "$cmd" "$FULL" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	if [ $rc = 1 ] && [ -c "$FULL" ] &&
		grep -q "^heapdump: cannot .*: No space left on device\$" "$TMP/err"; then
		ok "full/$name"
	else
		notok "full/$name" "exit $rc, $(ls -l "$FULL"): $(head -c 200 "$TMP/err")"
	fi
done
check devices/nothing-beside "" "$(ls "$TMP" | grep -E '^(null|full).')"

# ---- a FIFO: written in place for its reader ----
mkfifo "$TMP/fifo"
for c in "index|out.hds" "replace-class|out.json" "roots-of|out.json" "to-dot|out.dot"; do
	name=${c%%|*} file=${c#*|}
	cmd=$(printf '%s\n' "$CMDS" | sed -n "s/^$name|//p")
	run_cmd "$cmd" "$TMP/o/$file" >/dev/null 2>&1
	timeout 30 cat "$TMP/fifo" >"$TMP/fifo.out" &
	reader=$!
	timeout 30 sh -c 'args=$(printf "%s" "$1" | sed "s|@OUT@|$2|"); exec "$3" $args' \
		sh "$cmd" "$TMP/fifo" "$HD" 2>"$TMP/err"
	rc=$?
	wait $reader
	if [ $rc = 0 ] && [ -p "$TMP/fifo" ] && cmp -s "$TMP/fifo.out" "$TMP/o/$file"; then
		ok "fifo/$name"
	else
		notok "fifo/$name" "exit $rc, fifo: $(ls -l "$TMP/fifo"), same as the file: $(cmp -s "$TMP/fifo.out" "$TMP/o/$file" && echo yes || echo no): $(head -c 200 "$TMP/err")"
	fi
	rm -f "$TMP/o/$file"
done

# ---- symbolic links: followed, never replaced ----
# the target in another folder: the temporary file goes beside it, and
# neither folder keeps one
mkdir -p "$TMP/t" "$TMP/l"
printf '%s\n' "$CMDS" | while IFS='|' read -r name cmd; do
	rm -rf "$TMP/t"/* "$TMP/l"/*
	run_cmd "$cmd" "$TMP/o/want" >/dev/null 2>&1
	echo old >"$TMP/t/target"
	chmod 640 "$TMP/t/target"
	ln -s ../t/target "$TMP/l/link"
	run_cmd "$cmd" "$TMP/l/link" >/dev/null 2>"$TMP/err"
	rc=$?
	why=""
	[ $rc = 0 ] || why="exit $rc"
	[ -z "$why" ] && [ ! -L "$TMP/l/link" ] && why="the link was replaced"
	[ -z "$why" ] && [ "$(readlink "$TMP/l/link")" != ../t/target ] && why="the link changed"
	[ -z "$why" ] && ! cmp -s "$TMP/t/target" "$TMP/o/want" && why="the target does not hold the output"
	[ -z "$why" ] && [ "$(ls -A "$TMP/t" "$TMP/l" | tr '\n' ' ')" != "$TMP/l: link  $TMP/t: target " ] &&
		why="left behind: $(ls -A "$TMP/t" "$TMP/l" | tr '\n' ' ')"
	if [ -z "$why" ]; then ok "symlink/$name"; else
		notok "symlink/$name" "$why: $(head -c 200 "$TMP/err")"
	fi
	rm -f "$TMP/o/want"
done
# a chain of links, and a link to a file that does not exist yet
rm -rf "$TMP/t"/* "$TMP/l"/*
ln -s "$TMP/t/new.hds" "$TMP/l/a"
ln -s a "$TMP/l/b"
"$HD" index -q "$IN" -o "$TMP/l/b" 2>"$TMP/err"
check symlink/dangling-chain "0 $TMP/t/new.hds a 1" \
	"$? $(readlink "$TMP/l/a") $(readlink "$TMP/l/b") $("$HD" stats -q --format json "$TMP/t/new.hds" 2>/dev/null | jq '.totals.objects > 0 | if . then 1 else 0 end')"
check symlink/dangling-nothing-left "new.hds" "$(ls -A "$TMP/t")"
# a link to /proc/self/fd/1 (standard output, here a pipe)
ln -s /proc/self/fd/1 "$TMP/l/stdout"
for c in "to-dot|$TMP/o/d.dot" "index|$TMP/o/d.hds"; do
	name=${c%%|*} want=${c#*|}
	cmd=$(printf '%s\n' "$CMDS" | sed -n "s/^$name|//p")
	run_cmd "$cmd" "$want" >/dev/null 2>&1
	run_cmd "$cmd" "$TMP/l/stdout" 2>"$TMP/err" | cat >"$TMP/so.out"
	if [ -L "$TMP/l/stdout" ] && cmp -s "$TMP/so.out" "$want"; then
		ok "proc-self-fd-1/$name"
	else
		notok "proc-self-fd-1/$name" "link kept: $([ -L "$TMP/l/stdout" ] && echo yes || echo no), output $(wc -c <"$TMP/so.out") bytes, expected $(wc -c <"$want"): $(head -c 200 "$TMP/err")"
	fi
done

# ---- an output that is an input ----
# exit 2, "... is the input ...", the input byte for byte
refuse() { # refuse NAME CMD...
	n=$1
	shift
	"$HD" "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	if [ $rc = 2 ] && [ "$(sums)" = "$before" ] &&
		grep -q "is the input" "$TMP/err"; then
		ok "input/$n"
	else
		notok "input/$n" "exit $rc, inputs unchanged: $([ "$(sums)" = "$before" ] && echo yes || echo no): $(head -c 200 "$TMP/err")"
		rm -rf "$TMP/in" && mkdir "$TMP/in" # no cascade: rebuild
		setup_inputs
		before=$(sums)
	fi
}
B3="$TMP/in/before.json $IN $TMP/in/later.json"
refuse diff-before diff -q $B3 -o "$TMP/in/before.json"
refuse diff-later diff -q $B3 -o "$TMP/in/later.json"
refuse diff-after diff -q $B3 -o "$IN"
refuse store-source roots-of -q "$TMP/in/after.hds" --class Request -o "$IN"
refuse store-itself roots-of -q "$TMP/in/after.hds" --class Request -o "$TMP/in/after.hds"
refuse store-source-subgraph subgraph-of -q "$TMP/in/after.hds" --class Request -o "$IN"
refuse store-source-gml to-gml -q "$TMP/in/after.hds" -o "$IN"
refuse store-source-render render -q "$TMP/in/after.hds" --class Request --format svg -o "$IN"
refuse store-source-interface interface-with -q "$TMP/in/after.hds" "$TMP/in/diff.json" -o "$IN"
refuse diff-store-source diff -q "$TMP/in/before.json" "$TMP/in/after.hds" -o "$IN"
refuse interface-diff-file interface-with -q "$IN" "$TMP/in/diff.json" -o "$TMP/in/diff.json"
refuse from-file roots-of -q "$IN" --from "$TMP/in/diff.json" -o "$TMP/in/diff.json"
refuse replace-class-store replace-class -q "$TMP/in/after.hds" -o "$TMP/in/after.hds"
refuse index-gzip-input index -q "$TMP/in/before.json.gz" -o "$TMP/in/before.json.gz"
# links to an input: a hard link, a symbolic link, a link to a store's dump
ln "$IN" "$TMP/hard.json"
ln -s "$TMP/in/before.json" "$TMP/soft.json"
ln "$IN" "$TMP/hard-src.json"
refuse hard-link roots-of -q "$IN" --class Request -o "$TMP/hard.json"
refuse hard-link-index index -q "$IN" -o "$TMP/hard.json"
refuse hard-link-replace-class replace-class -q "$IN" -o "$TMP/hard.json"
refuse symlink-diff diff -q $B3 -o "$TMP/soft.json"
refuse symlink-to-dot to-dot -q "$TMP/in/before.json" -o "$TMP/soft.json"
refuse hard-link-store-source roots-of -q "$TMP/in/after.hds" --class Request -o "$TMP/hard-src.json"
# leaks --svg DIR: each DIR/suspect-N.svg is an output too
mkdir "$TMP/svg"
ln "$TMP/in/before.json" "$TMP/svg/suspect-1.svg"
refuse leaks-svg leaks -q $B3 --svg "$TMP/svg"
rm -f "$TMP/hard.json" "$TMP/soft.json" "$TMP/hard-src.json" "$TMP/svg/suspect-1.svg"
check inputs-untouched "$before" "$(sums)"

# ---- signals: no temporary file left, the status of the signal ----
# A big dump, written slowly through the shim (each write of a file
# sleeps); the signal comes once the temporary file exists. The command
# runs with SIGINT at its default (a background job of sh ignores it).
awk 'BEGIN {
	printf "{\"type\":\"ROOT\", \"root\":\"vm\", \"references\":[\"0x1000\"]}\n"
	for (i = 0; i < 200000; i++)
		printf "{\"address\":\"0x%x\", \"type\":\"STRING\", \"class\":\"0x1000\", \"references\":[\"0x%x\"], \"value\":\"s%06d\", \"memsize\":40}\n", 4096 + 40 * i, 4096 + 40 * ((i + 1) % 200000), i
}' >"$TMP/big.json"
# killed NAME SIG DIR PATTERN CMD...: sends SIG once DIR has PATTERN
killed() {
	n=$1 sig=$2 dir=$3 pat=$4
	shift 4
	rm -rf "$dir" && mkdir -p "$dir"
	env LD_PRELOAD="$SHIM" ASAN_OPTIONS="$SHIM_ASAN" FAULTIO_DELAY_US=20000 \
		TMPDIR="$TMP/spool" env --default-signal=INT,TERM \
		"$HD" "$@" <"$TMP/big.json" >/dev/null 2>"$TMP/err" &
	pid=$!
	i=0
	while ! ls "$dir" | grep -q "$pat" && [ $i -lt 600 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	seen=$(ls "$dir" | grep "$pat" | head -1)
	killed_check "$n" "$sig" $pid "$dir" "$seen" "no $pat in $dir after 30 s"
}
mkdir -p "$TMP/spool"
killed index-INT INT "$TMP/sig" tmp index -q "$TMP/big.json" -o "$TMP/sig/big.hds"
killed index-TERM TERM "$TMP/sig" tmp index -q "$TMP/big.json" -o "$TMP/sig/big.hds"
killed roots-of-TERM TERM "$TMP/sig" tmp roots-of -q "$TMP/big.json" --type STRING -o "$TMP/sig/r.json"
killed replace-class-INT INT "$TMP/sig" tmp replace-class -q "$TMP/big.json" -o "$TMP/sig/r.json"
# the spool of standard input, while it is being written and after
killed spool-INT INT "$TMP/spool" heapdump roots-of -q - --type STRING -o "$TMP/sig/r.json"
killed spool-replace-class-TERM TERM "$TMP/spool" heapdump replace-class -q - -o "$TMP/sig/r.json"
# a reader of standard output that goes away: SIGPIPE, and the spool goes
rm -rf "$TMP/spool" && mkdir -p "$TMP/spool"
env --default-signal=PIPE TMPDIR="$TMP/spool" sh -c \
	'"$1" subgraph-of -q - --type STRING <"$2" | head -c 10 >/dev/null' \
	sh "$HD" "$IN" 2>/dev/null
check signal/spool-PIPE "" "$(ls -A "$TMP/spool")"

# ---- heapdump dump -o FILE on another file system ----
# The process side of the protocol is played by the test: a shell that,
# on SIGURG, writes a dump into DIR as the gem does (the sidecar, then
# the dump renamed into place).
cat >"$TMP/server.sh" <<'SERVER'
trap 'cp "$2" "$1/.heapdump-$$.tmp" &&
	printf "{\"pid\":%s}\n" $$ >"$1/heapdump-$$-1.json.meta.json" &&
	mv "$1/.heapdump-$$.tmp" "$1/heapdump-$$-1.json"' URG
: >"$3"
i=0
while [ $i -lt 1200 ]; do sleep 0.1; i=$((i + 1)); done
SERVER
start_server() { # start_server DIR: $server is its pid, once it is ready
	rm -rf "$1" "$TMP/ready" && mkdir -p "$1"
	sh "$TMP/server.sh" "$1" "$IN" "$TMP/ready" &
	server=$!
	i=0
	while [ ! -f "$TMP/ready" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
}
stop_server() { kill $server 2>/dev/null; wait $server 2>/dev/null; return 0; }
# valgrind (make check-valgrind) keeps files in TMPDIR unless told not to
VALGRIND_OPTS="${VALGRIND_OPTS:+$VALGRIND_OPTS }--vgdb=no"
export VALGRIND_OPTS

# the shim: a rename between two folders fails with EXDEV, as between
# two file systems; the copy then goes through a temporary file
dump_xdev() { # dump_xdev ENV...: run heapdump dump under the shim
	rm -rf "$TMP/do" && mkdir -p "$TMP/do"
	echo "the file that was there" >"$TMP/do/out.json"
	start_server "$TMP/dd"
	env LD_PRELOAD="$SHIM" ASAN_OPTIONS="$SHIM_ASAN" FAULTIO_XDEV=1 "$@" \
		"$HD" dump -q --dir "$TMP/dd" --timeout 60 -o "$TMP/do/out.json" $server \
		>"$TMP/out" 2>"$TMP/err"
	rc=$?
	stop_server
}
dump_xdev
check dump/xdev-moved "0 $TMP/do/out.json same out.json out.json.meta.json" \
	"$rc $(cat "$TMP/out") $(cmp -s "$IN" "$TMP/do/out.json" && echo same) $(ls -A "$TMP/do" | tr '\n' ' ' | sed 's/ $//')"
check dump/xdev-source-removed "" "$(ls -A "$TMP/dd")"
dump_xdev FAULTIO_OP=write FAULTIO_BYTES=50000
why=""
[ $rc = 1 ] || why="exit $rc, expected 1"
[ -z "$why" ] && ! grep -q "No space left on device" "$TMP/err" && why="the message does not name ENOSPC"
[ -z "$why" ] && grep -q "cross-device" "$TMP/err" && why="the message names EXDEV"
[ -z "$why" ] && [ "$(cat "$TMP/do/out.json")" != "the file that was there" ] && why="FILE was lost"
[ -z "$why" ] && [ "$(ls -A "$TMP/do")" != out.json ] && why="left behind: $(ls -A "$TMP/do" | tr '\n' ' ')"
[ -z "$why" ] && ! cmp -s "$IN" "$TMP/dd/heapdump-$server-1.json" && why="the dump was lost"
if [ -z "$why" ]; then ok dump/xdev-full-keeps-file; else
	notok dump/xdev-full-keeps-file "$why: $(head -c 300 "$TMP/err")"
fi
# the same on a real full file system (a 64 KB tmpfs), when mount works
# (root): the shim's case above runs everywhere
if [ "$(id -u)" = 0 ] && mkdir -p "$TMP/mnt" && mount -t tmpfs -o size=64k tmpfs "$TMP/mnt" 2>/dev/null; then
	trap 'umount "$TMP/mnt" 2>/dev/null; rm -rf "$TMP"' EXIT
	echo "the file that was there" >"$TMP/mnt/out.json"
	head -c 40000 /dev/zero >"$TMP/mnt/filler"
	start_server "$TMP/dd"
	"$HD" dump -q --dir "$TMP/dd" --timeout 60 -o "$TMP/mnt/out.json" $server \
		>"$TMP/out" 2>"$TMP/err"
	rc=$?
	stop_server
	why=""
	[ $rc = 1 ] || why="exit $rc, expected 1"
	[ -z "$why" ] && ! grep -q "No space left on device" "$TMP/err" && why="the message does not name ENOSPC"
	[ -z "$why" ] && [ "$(cat "$TMP/mnt/out.json")" != "the file that was there" ] && why="FILE was lost"
	[ -z "$why" ] && [ "$(ls -A "$TMP/mnt" | tr '\n' ' ')" != "filler out.json " ] && why="left behind: $(ls -A "$TMP/mnt" | tr '\n' ' ')"
	[ -z "$why" ] && ! cmp -s "$IN" "$TMP/dd/heapdump-$server-1.json" && why="the dump was lost"
	if [ -z "$why" ]; then ok dump/tmpfs-full-keeps-file; else
		notok dump/tmpfs-full-keeps-file "$why: $(head -c 300 "$TMP/err")"
	fi
	# standard input spooled to a full file system: the real errno
	head -c 20000 /dev/zero >"$TMP/mnt/filler2"
	TMPDIR="$TMP/mnt" "$HD" roots-of -q - --type STRING <"$IN" >/dev/null 2>"$TMP/err"
	rc=$?
	if [ $rc = 1 ] && grep -q "No space left on device" "$TMP/err" &&
		! grep -q "Success" "$TMP/err" && [ "$(ls -A "$TMP/mnt" | tr '\n' ' ')" = "filler filler2 out.json " ]; then
		ok spool/tmpfs-full
	else
		notok spool/tmpfs-full "exit $rc, $(ls -A "$TMP/mnt" | tr '\n' ' '): $(head -c 300 "$TMP/err")"
	fi
	umount "$TMP/mnt"
fi
# to a device: written in place, the device kept
start_server "$TMP/dd"
"$HD" dump -q --dir "$TMP/dd" --timeout 60 -o "$NULL" $server >/dev/null 2>"$TMP/err"
check dump/device-kept "0 1" "$? $([ -c "$NULL" ] && echo 1)"
stop_server
