#!/bin/sh
# trust.sh - another local user must not steer heapdump's files (issue
# 41). The suite makes a second local user (useradd -M; it runs as root,
# as CI does; a suite that cannot make one fails and says why) who
# attacks a shared, sticky folder ($TMP/shared, as /tmp) while root runs
# heapdump there:
#   dump/*     heapdump dump PID takes only a dump the process's user
#              wrote: a planted regular file or link of the dump's name is
#              ignored, a planted sidecar link is not moved with -o
#   attach/*   dump --attach: the request file names nothing the other
#              user can plant (a poller plants REQUEST-STEM.json)
#   store/*    a store planted beside the dump (its recorded size, mtime
#              and fingerprint those of the dump) is not reused; a store
#              of another user served explicitly is read into memory, so
#              rewriting or truncating it does not crash serve
#   link/*     a link planted as the cache's name while serve indexes is
#              replaced, never written through; the store is 0600 there
#   stale/*    a dump rewritten with the same size and mtime (touch -r)
#              is indexed again (ctime, nanoseconds, inode)
#   sweep/*    a temporary store left by a kill -9 is swept at the next
#              cache write; another user's and a locked one are not
#   out/*      -o through a link of another user in the shared folder is
#              refused
. "$(dirname "$0")/../lib.sh"
needs jq jq
needs curl curl
needs flock util-linux
needs gdb gdb

HD=$HEAPDUMP
faultio_shim
# the shim wraps libc's calls: ASan must tolerate coming second
SHIM_ASAN="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
PY=/usr/bin/python3
[ -x "$PY" ] || { notok needs-python3 "/usr/bin/python3 is missing: apt-get install python3"; exit 1; }

# ---- the second user ----
PIDS=""
cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	for p in $PIDS; do wait "$p" 2>/dev/null; done
	second_user_remove
	rm -rf "$TMP"
}
trap cleanup EXIT
second_user
chmod 755 "$TMP"
SH="$TMP/shared"
mkdir -m 1777 "$SH"
# the program and the fixtures, where the other user can run and read them
mkdir -m 755 "$TMP/bin" "$TMP/data"
cp "$HD" "$TMP/bin/heapdump"
AHD="$TMP/bin/heapdump"
L="$DATA/named_ruby3.1_leak"
cp "$L"_before.json.gz "$L"_later.json.gz "$TMP/data/"
chmod 644 "$TMP/data"/*
# root's own files, which the other user aims at
mkdir -m 700 "$TMP/root"
echo "root's secret" >"$TMP/root/secret"
chmod 600 "$TMP/root/secret"
export XDG_CACHE_HOME="$TMP/xdg"

get() { curl -sf -H "Authorization: Bearer $TOKEN" "$BASE/api/$1"; }
stop() { [ -n "$SPID" ] && kill "$SPID" 2>/dev/null && wait "$SPID" 2>/dev/null; SPID=""; }
alive() { [ -n "$SPID" ] && kill -0 "$SPID" 2>/dev/null && echo alive || echo dead; }
# wait_text FILE TEXT: until FILE holds TEXT (60 s at most), so that a
# plant comes after the step it attacks however slow the run (valgrind)
wait_text() {
	wt_i=0
	while ! grep -q "$2" "$1" 2>/dev/null && [ $wt_i -lt 600 ]; do sleep 0.1; wt_i=$((wt_i + 1)); done
}
# wait_reading PID FILE: until process PID holds FILE open (its index
# reading it, slowed by the shim), seen twice 0.1 s apart
wait_reading() {
	wr_i=0 wr_seen=0
	while [ $wr_seen -lt 2 ] && [ $wr_i -lt 600 ] && kill -0 "$1" 2>/dev/null; do
		if ls -l "/proc/$1/fd" 2>/dev/null | grep -q -- "-> $2\$"; then
			wr_seen=$((wr_seen + 1))
		else
			wr_seen=0
		fi
		sleep 0.1
		wr_i=$((wr_i + 1))
	done
}
secret_intact() {
	check "$1/secret-untouched" "root's secret" "$(cat "$TMP/root/secret" 2>/dev/null)"
	check "$1/secret-mode" "-rw------- root" "$(stat -c '%A %U' "$TMP/root/secret")"
}

# ============ 1. dump PID: only a dump the process's user wrote ============
sleep 300 &
TPID=$!
PIDS="$PIDS $TPID"

# a planted regular file of the dump's name
"$HD" dump --dir "$SH" --timeout 2 "$TPID" >"$TMP/d1.out" 2>"$TMP/d1.err" &
DP=$!
wait_text "$TMP/d1.err" "waiting for the dump"
as_att sh -c "echo '{\"planted\":1}' >'$SH/heapdump-$TPID-1.json'"
wait "$DP"
check dump/planted-file-refused 1 "$?"
check dump/planted-file-not-printed "" "$(cat "$TMP/d1.out")"
check_grep dump/planted-file-said "ignoring '$SH/heapdump-$TPID-1.json': it is owned by uid $ATT_UID" "$TMP/d1.err"

# a planted link, with -o into root's own directory
"$HD" dump --dir "$SH" --timeout 2 -o "$TMP/root/app.json" "$TPID" >"$TMP/d2.out" 2>"$TMP/d2.err" &
DP=$!
wait_text "$TMP/d2.err" "waiting for the dump"
as_att ln -s "$TMP/root/secret" "$SH/heapdump-$TPID-2.json"
wait "$DP"
check dump/planted-link-refused 1 "$?"
check dump/planted-link-not-moved "absent" "$( [ -e "$TMP/root/app.json" ] || [ -L "$TMP/root/app.json" ] && echo present || echo absent)"
check_grep dump/planted-link-said "ignoring '$SH/heapdump-$TPID-2.json': it is a symbolic link" "$TMP/d2.err"
secret_intact dump/link

# the process's own dump is taken; a sidecar link planted beside it is not
as_att ln -s "$TMP/root/secret" "$SH/heapdump-$TPID-3.json.hdmeta"
"$HD" dump --dir "$SH" --timeout 5 -o "$TMP/root/app3.json" "$TPID" >"$TMP/d3.out" 2>"$TMP/d3.err" &
DP=$!
wait_text "$TMP/d3.err" "waiting for the dump"
(umask 077 && echo '{"type":"ROOT", "root":"vm", "references":[]}' >"$SH/.d3.tmp" && mv "$SH/.d3.tmp" "$SH/heapdump-$TPID-3.json")
wait "$DP"
check dump/own-dump-taken 0 "$?"
check dump/own-dump-moved '{"type":"ROOT", "root":"vm", "references":[]}' "$(cat "$TMP/root/app3.json" 2>/dev/null)"
check dump/sidecar-link-not-moved "absent" "$( [ -e "$TMP/root/app3.json.hdmeta" ] || [ -L "$TMP/root/app3.json.hdmeta" ] && echo present || echo absent)"
check_grep dump/sidecar-link-said "sidecar '$SH/heapdump-$TPID-3.json.hdmeta' is not moved: it is a symbolic link" "$TMP/d3.err"
secret_intact dump/sidecar
kill "$TPID" 2>/dev/null

# ============ 2. dump --attach: the request names nothing to plant ============
RUBY=/usr/bin/ruby
if [ ! -x "$RUBY" ]; then
	notok attach/ruby "/usr/bin/ruby is missing: apt-get install ruby"
else
	"$RUBY" -e 'STDOUT.sync = true; puts :ready; loop { x = "a" * 10; sleep 0.001 }' >"$TMP/rb.out" &
	RPID=$!
	PIDS="$PIDS $RPID"
	i=0
	while [ "$(cat "$TMP/rb.out" 2>/dev/null)" != ready ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	# the other user: every request seen, its stem planted as a dump
	cat >"$TMP/bin/poll.py" <<'EOF'
import os, sys, time
d, end = sys.argv[1], time.time() + float(sys.argv[2])
done = set()
while time.time() < end and not os.path.exists(os.path.join(d, "stop-poll")):
    try:
        names = os.listdir(d)
    except OSError:
        break
    for n in names:
        if n.startswith(".heapdump-") and n.endswith(".attach") and n not in done:
            done.add(n)
            stem = n[1:-len(".attach")]
            for name in (stem + ".json", ".%s.json.tmp" % stem):
                try:
                    with open(os.path.join(d, name), "x") as f:
                        f.write('{"planted":1}\n')
                except OSError:
                    pass
    time.sleep(0.001)
EOF
	as_att "$PY" "$TMP/bin/poll.py" "$SH" 30 &
	POLL=$!
	PIDS="$PIDS $POLL"
	sleep 0.3
	"$HD" dump --attach --dir "$SH" --timeout 30 -q -o "$TMP/root/att.json" "$RPID" >"$TMP/a.out" 2>"$TMP/a.err"
	check attach/dumped 0 "$?"
	check attach/real-dump 1 "$(head -c 200 "$TMP/root/att.json" 2>/dev/null | grep -c '"type":"ROOT"')"
	check attach/not-planted 0 "$(grep -c planted "$TMP/root/att.json" 2>/dev/null)"
	touch "$SH/stop-poll"
	wait "$POLL"
	kill "$RPID" 2>/dev/null
fi

# ============ 3. a store planted beside the dump is not reused ============
cp "$TMP/data/named_ruby3.1_leak_later.json.gz" "$SH/app.json.gz"
chmod 644 "$SH/app.json.gz"
"$HD" stats -q -f json "$SH/app.json.gz" >"$TMP/real.json"
# the other user: a store of another dump, given the size, mtime and
# fingerprint of root's dump (copied from a store of it into META)
as_att sh -c "'$AHD' index -q -o '$SH/app.json.gz.hds' '$TMP/data/named_ruby3.1_leak_before.json.gz' &&
	'$AHD' index -q -o '$SH/genuine.hds' '$SH/app.json.gz'" 2>"$TMP/plant.err"
cp "$TOP/tests/tools/store_key_copy.py" "$TMP/bin/meta.py"
as_att "$PY" "$TMP/bin/meta.py" "$SH/genuine.hds" "$SH/app.json.gz.hds" 2>>"$TMP/plant.err"
check store/planted "$ATT" "$(stat -c %U "$SH/app.json.gz.hds" 2>/dev/null)$(head -c 300 "$TMP/plant.err")"
SPID=""
if serve_start planted 600 "$HD" serve "$SH/app.json.gz"; then
	check store/planted-answers-are-the-dumps "$(jq -c .totals "$TMP/real.json")" "$(get overview | jq -c .totals)"
	check_grep store/planted-not-used "app.json.gz.hds is owned by another user: not used" "$TMP/planted.err"
	stop
fi

# a store of the other user, served as it is: rewritten, then truncated
as_att "$AHD" index -q -o "$SH/theirs.hds" "$TMP/data/named_ruby3.1_leak_later.json.gz"
if serve_start theirs 600 "$HD" serve "$SH/theirs.hds"; then
	get overview | jq -c .totals >"$TMP/t0.json"
	get 'domtree?limit=5' >"$TMP/dt0.json"
	size=$(stat -c %s "$SH/theirs.hds")
	as_att "$PY" -c "
import sys
f = open(sys.argv[1], 'r+b'); n = int(sys.argv[2])
f.seek(4096); f.write(b'\xff' * (n - 8192))" "$SH/theirs.hds" "$size"
	get overview | jq -c .totals >"$TMP/t1.json"
	get 'domtree?limit=5' >"$TMP/dt1.json"
	check store/rewritten-same-answers "$(cat "$TMP/t0.json")" "$(cat "$TMP/t1.json")"
	check store/rewritten-same-domtree "$(cat "$TMP/dt0.json")" "$(cat "$TMP/dt1.json")"
	check store/rewritten-alive alive "$(alive)"
	as_att truncate -s 64 "$SH/theirs.hds"
	get overview | jq -c .totals >"$TMP/t2.json"
	get 'objects?by=class' >/dev/null
	check store/truncated-same-answers "$(cat "$TMP/t0.json")" "$(cat "$TMP/t2.json")"
	check store/truncated-alive alive "$(alive)"
	stop
fi

# ============ 4. a link planted as the cache's name during the index ============
rm -f "$SH"/app.json.gz.hds* "$SH/genuine.hds"
mkdir -m 755 "$TMP/home"
echo "victim's notes" >"$TMP/home/notes"
chmod 600 "$TMP/home/notes"
SPID=""
LD_PRELOAD="$SHIM" ASAN_OPTIONS="$SHIM_ASAN" FAULTIO_READ_DELAY_US=400000 "$HD" serve "$SH/app.json.gz" 2>"$TMP/link.err" &
SPID=$!
PIDS="$PIDS $SPID"
# the index reads the dump: the cache's name was judged free before
wait_reading "$SPID" "$SH/app.json.gz"
as_att ln -s "$TMP/home/notes" "$SH/app.json.gz.hds"
i=0
while ! grep -q 'serving on' "$TMP/link.err" && kill -0 "$SPID" 2>/dev/null && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
check_grep link/served 'serving on' "$TMP/link.err"
check link/notes-untouched "victim's notes" "$(cat "$TMP/home/notes")"
check link/notes-mode "-rw-------" "$(stat -c %A "$TMP/home/notes")"
check link/link-replaced "regular file root 600" "$(stat -c '%F %U %a' "$SH/app.json.gz.hds" 2>/dev/null)"
stop

# ============ 5. stale: same size, same mtime, another content ============
mkdir -p "$TMP/st"
zcat "$TMP/data/named_ruby3.1_leak_later.json.gz" >"$TMP/st/app.json"
SPID=""
if serve_start stale1 600 "$HD" serve "$TMP/st/app.json"; then
	stop
	touch -r "$TMP/st/app.json" "$TMP/st/stamp"
	# a memsize in the middle of the dump (outside the fingerprint's
	# first and last 64 KiB), one digit changed in place
	"$PY" - "$TMP/st/app.json" <<'EOF'
import re, sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
mid = len(b) // 2
m = re.compile(rb'"memsize":([1-8])').search(bytes(b), mid)
b[m.start(1)] = b[m.start(1)] + 1
open(p, "r+b").write(b)
EOF
	touch -r "$TMP/st/stamp" "$TMP/st/app.json"
	"$HD" stats -q -f json "$TMP/st/app.json" >"$TMP/st.json"
	if serve_start stale2 600 "$HD" serve "$TMP/st/app.json"; then
		check stale/answers-of-the-new-dump "$(jq -c .totals "$TMP/st.json")" "$(get overview | jq -c .totals)"
		check_grep stale/said "app.json.hds was stale" "$TMP/stale2.err"
		stop
	fi
fi

# ============ 6. the sweep of a killed writer's temporary store ============
rm -f "$SH"/app.json.gz.hds*
SPID=""
LD_PRELOAD="$SHIM" ASAN_OPTIONS="$SHIM_ASAN" FAULTIO_DELAY_US=3000000 "$HD" serve "$SH/app.json.gz" 2>"$TMP/kill.err" &
KP=$!
i=0
while [ -z "$(ls "$SH" | grep '\.hds\.tmp')" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
kill -9 "$KP"
wait "$KP" 2>/dev/null
left=$(ls "$SH" | grep '^app\.json\.gz\.hds\.tmp')
check sweep/left-by-kill 1 "$(echo "$left" | grep -c .)"
as_att sh -c "echo x >'$SH/theirs.hds.tmpAAAAAA'"
echo x >"$SH/held.hds.tmpBBBBBB"
# held by this shell, as a writer holds its temporary file
exec 9<"$SH/held.hds.tmpBBBBBB"
flock -n 9 || notok sweep/lock "cannot lock held.hds.tmpBBBBBB"
if serve_start sweep 600 "$HD" serve "$SH/app.json.gz"; then
	check sweep/swept "" "$(ls "$SH" | grep '^app\.json\.gz\.hds\.tmp')"
	check sweep/other-users-kept "$ATT" "$(stat -c %U "$SH/theirs.hds.tmpAAAAAA" 2>/dev/null)"
	check sweep/locked-kept x "$(cat "$SH/held.hds.tmpBBBBBB" 2>/dev/null)"
	check sweep/store-0600 "600" "$(stat -c %a "$SH/app.json.gz.hds")"
	stop
fi
exec 9<&-

# ============ 7. -o through another user's link in the shared folder ============
as_att ln -s "$TMP/root/secret" "$SH/report.json"
check_rc out/link-refused 1 "$HD" replace-class -q -o "$SH/report.json" "$SH/app.json.gz"
check_grep out/link-said "symbolic link or special file of another user in a shared directory" "$TMP/err"
secret_intact out
# root's own link there is followed, as the outputs' rule says
ln -s "$TMP/root/mine.json" "$SH/mine.json"
check_rc out/own-link-followed 0 "$HD" replace-class -q -o "$SH/mine.json" "$SH/app.json.gz"
check out/own-link-target 1 "$(head -1 "$TMP/root/mine.json" | jq -e .type >/dev/null && echo 1)"

# ============ 8. a sidecar another user put beside a dump ============
as_att sh -c "printf '%s\n' '{\"heapdump_sidecar\":1,\"pid\":4242,\"rss_bytes\":1,\"time\":\"2001-01-01T00:00:00.000000Z\"}' >'$SH/app.json.gz.meta.json'"
check_rc sidecar/stats 0 "$HD" stats -q "$SH/app.json.gz"
check sidecar/not-read 0 "$(grep -c 'pid 4242' "$TMP/out")"
check_grep sidecar/said "ignoring '$SH/app.json.gz.meta.json': owned by uid $ATT_UID" "$TMP/err"
# under the gem's name, DUMP.hdmeta, the first one looked for, as well
as_att sh -c "printf '%s\n' '{\"heapdump_sidecar\":1,\"pid\":4242,\"rss_bytes\":1,\"time\":\"2001-01-01T00:00:00.000000Z\"}' >'$SH/app.json.gz.hdmeta'"
check_rc sidecar/stats-new-name 0 "$HD" stats -q "$SH/app.json.gz"
check sidecar/not-read-new-name 0 "$(grep -c 'pid 4242' "$TMP/out")"
check_grep sidecar/said-new-name "ignoring '$SH/app.json.gz.hdmeta': owned by uid $ATT_UID" "$TMP/err"
rm -f "$SH/app.json.gz.hdmeta"
as_att ln -s "$TMP/root/sc.json" "$SH/app.json.gz.hdmeta"
printf '%s\n' '{"heapdump_sidecar":1,"pid":4242,"rss_bytes":1,"time":"2001-01-01T00:00:00.000000Z"}' >"$TMP/root/sc.json"
check_rc sidecar/stats-new-name-link 0 "$HD" stats -q "$SH/app.json.gz"
check sidecar/not-read-new-name-link 0 "$(grep -c 'pid 4242' "$TMP/out")"
check_grep sidecar/said-new-name-link "ignoring '$SH/app.json.gz.hdmeta': a symbolic link of uid $ATT_UID" "$TMP/err"
rm -f "$SH/app.json.gz.hdmeta"
# root's own sidecar there is read
rm -f "$SH/app.json.gz.meta.json"
printf '%s\n' '{"heapdump_sidecar":1,"pid":4343,"rss_bytes":1,"time":"2001-01-01T00:00:00.000000Z"}' >"$SH/app.json.gz.meta.json"
check_rc sidecar/own-stats 0 "$HD" stats -q "$SH/app.json.gz"
check sidecar/own-read 1 "$(grep -c 'pid 4343' "$TMP/out")"
