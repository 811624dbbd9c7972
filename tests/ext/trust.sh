#!/bin/sh
# tests/ext/trust.sh - the gem on a shared machine (issue 41): a second
# local user (made here: useradd -M; the suite fails, saying why, when it
# cannot) attacks a sticky shared folder while root's Ruby dumps there:
#   names/*   the temporary file's name tells nothing of the dump's, so a
#             poller that plants NAME.hdmeta -> root's file from it
#             finds nothing to plant, and root's file stays as it was;
#             the default name has 16 random hex digits
#   link/*    a link planted at a name the gem makes is replaced, never
#             followed; at a name given, another user's link is refused
#   load/*    HeapDump.load does not reuse a store the other user planted
#             beside the dump (its size, mtime and fingerprint the dump's)
#   render/*  Selection#render refuses another user's link at its path
#             (Graphviz's own -o would follow it)
#   origin/*  a sidecar the other user put beside a dump is not read
SUITE=ext/trust
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
[ -x "$PY" ] || { notok needs-python3 "/usr/bin/python3 is missing: apt-get install python3"; exit 1; }
HD=$HEAPDUMP
POLL=""
cleanup() {
	[ -n "$POLL" ] && kill "$POLL" 2>/dev/null && wait "$POLL" 2>/dev/null
	second_user_remove
	rm -rf "$TMP"
}
trap cleanup EXIT
second_user
chmod 755 "$TMP"
SH="$TMP/shared"
mkdir -m 1777 "$SH"
mkdir -m 700 "$TMP/root"
echo "root's secret" >"$TMP/root/secret"
chmod 600 "$TMP/root/secret"
mkdir -m 755 "$TMP/bin"

# ---- names: the other user plants a sidecar link from each temporary name ----
cat >"$TMP/bin/poll.py" <<'EOF'
import os, sys, time
d, target, end = sys.argv[1], sys.argv[2], time.time() + 60
seen = set()
while time.time() < end and not os.path.exists(os.path.join(d, "stop-poll")):
    try:
        names = os.listdir(d)
    except OSError:
        break
    for n in names:
        if n in seen or not n.startswith(".") or ".tmp" not in n:
            continue
        seen.add(n)
        # the dump's name, as a temporary name .NAME.tmp-... would tell it
        final = n[1:n.index(".tmp")]
        if final.startswith("heapdump-") and final.endswith(".json"):
            try:
                os.symlink(target, os.path.join(d, final + ".hdmeta"))
            except OSError:
                pass
    time.sleep(0.0005)
EOF
as_att "$PY" "$TMP/bin/poll.py" "$SH" "$TMP/root/secret" &
POLL=$!
sleep 0.3
ruby -rheapdump -e '
  File.write(ARGV[1], Array.new(10) { HeapDump.dump(dir: ARGV[0]) }.join("\n"))
' "$SH" "$TMP/dumps.txt" 2>"$TMP/rb.err"
check names/dumped 0 "$?"
touch "$SH/stop-poll"
wait "$POLL"
POLL=""
check names/secret-untouched "root's secret" "$(cat "$TMP/root/secret" 2>/dev/null)"
check names/secret-mode "-rw------- root" "$(stat -c '%A %U' "$TMP/root/secret")"
check names/ten-dumps 10 "$(grep -c . "$TMP/dumps.txt")"
check names/random-part 10 "$(sed 's|.*/||' "$TMP/dumps.txt" | grep -cE '^heapdump-[0-9]+-[0-9]{8}T[0-9]{6}-[0-9]{6}-[0-9a-f]{16}\.json$')"
bad=0
while read -r d; do
	[ "$(stat -c '%F %U %a' "$d.hdmeta" 2>/dev/null)" = "regular file root 600" ] || bad=$((bad + 1))
done <"$TMP/dumps.txt"
check names/sidecars-regular-0600 0 "$bad"

# ---- link: at a name the gem makes, replaced; at a name given, refused ----
# (the sidecar and the dump are renamed into place in C, after the walk:
# over the links, never through them)
as_att ln -s "$TMP/root/secret" "$SH/fixed.json.hdmeta"
as_att ln -s "$TMP/root/fixed-dump" "$SH/fixed.json"
# a name the gem makes, made known to the other user
ruby -rheapdump -e '
  class << HeapDump
    def default_path(dir, _gzip) = File.join(dir, "fixed.json")
  end
  HeapDump.dump(dir: ARGV[0])
' "$SH" 2>"$TMP/rb.err"
check link/made-name-dumped 0 "$?"
check link/made-name-secret "root's secret" "$(cat "$TMP/root/secret" 2>/dev/null)"
check link/made-name-sidecar "regular file root" "$(stat -c '%F %U' "$SH/fixed.json.hdmeta" 2>/dev/null)"
check link/made-name-dump "regular file root" "$(stat -c '%F %U' "$SH/fixed.json" 2>/dev/null)"
check link/made-name-not-through absent "$([ -e "$TMP/root/fixed-dump" ] && echo present || echo absent)"
as_att ln -s "$TMP/root/given.json" "$SH/given.json"
ruby -rheapdump -e '
  begin
    HeapDump.dump(ARGV[0])
    puts "written"
  rescue HeapDump::Error => e
    puts e.message
  end
' "$SH/given.json" >"$TMP/given.out" 2>"$TMP/rb.err"
check_grep link/given-refused "cannot write .*given.json: it is a link of another user in a shared directory" "$TMP/given.out"
check link/given-not-written absent "$([ -e "$TMP/root/given.json" ] && echo present || echo absent)"

# ---- load: a store planted beside the dump ----
cp "$DATA/named_ruby3.1_leak_later.json.gz" "$SH/app.json.gz"
chmod 644 "$SH/app.json.gz"
cp "$DATA/named_ruby3.1_leak_before.json.gz" "$TMP/bin/before.json.gz"
chmod 644 "$TMP/bin/before.json.gz"
cp "$HD" "$TMP/bin/heapdump"
as_att sh -c "'$TMP/bin/heapdump' index -q -o '$SH/app.json.gz.hds' '$TMP/bin/before.json.gz' &&
	'$TMP/bin/heapdump' index -q -o '$SH/genuine.hds' '$SH/app.json.gz'" 2>"$TMP/plant.err"
cp "$TOP/tests/tools/store_key_copy.py" "$TMP/bin/meta.py"
as_att "$PY" "$TMP/bin/meta.py" "$SH/genuine.hds" "$SH/app.json.gz.hds" 2>>"$TMP/plant.err"
check load/planted "$ATT" "$(stat -c %U "$SH/app.json.gz.hds" 2>/dev/null)$(head -c 300 "$TMP/plant.err")"
want=$("$HD" stats -q -f json "$SH/app.json.gz" | jq .totals.objects)
got=$(XDG_CACHE_HOME="$TMP/xdg" ruby -rheapdump -e 'puts HeapDump.load(ARGV[0]).totals[:objects]' "$SH/app.json.gz" 2>"$TMP/load.err")
check load/objects-of-the-dump "$want" "$got"
check load/planted-left-alone "$ATT" "$(stat -c %U "$SH/app.json.gz.hds")"

# ---- render: Graphviz's drawing written by the outputs' rule ----
as_att ln -s "$TMP/root/secret" "$SH/draw.svg"
XDG_CACHE_HOME="$TMP/xdg" ruby -rheapdump -e '
  h = HeapDump.load(ARGV[0])
  sel = h.select(address: h.select(type: :CLASS).first(2).map(&:address))
  begin
    sel.render(ARGV[1])
    puts "written"
  rescue HeapDump::Error => e
    puts e.message
  end
  puts sel.render(ARGV[2])
' "$SH/app.json.gz" "$SH/draw.svg" "$TMP/root/mine.svg" >"$TMP/render.out" 2>"$TMP/render.err"
check_grep render/link-refused "cannot write .*draw.svg: it is a link of another user in a shared directory" "$TMP/render.out"
check render/secret-untouched "root's secret" "$(cat "$TMP/root/secret" 2>/dev/null)"
check render/own-path-drawn 1 "$(grep -c '<svg' "$TMP/root/mine.svg" 2>/dev/null)"

# ---- origin: a sidecar planted beside a dump that has none ----
# (the gem's name, DUMP.hdmeta, then an older gem's, DUMP.meta.json)
for sfx in hdmeta meta.json; do
	as_att sh -c "printf '%s\n' '{\"heapdump_sidecar\":1,\"pid\":4242,\"rss_bytes\":1,\"time\":\"2001-01-01T00:00:00.000000Z\"}' >'$SH/app.json.gz.$sfx'"
	got=$(XDG_CACHE_HOME="$TMP/xdg" ruby -rheapdump -e 'h = HeapDump.load(ARGV[0]); p h.send(:origin), h.sidecar' "$SH/app.json.gz" 2>"$TMP/origin.err")
	check origin/not-read-$sfx "[0, nil, nil]
nil" "$got"
	check_grep origin/said-$sfx "ignoring '$SH/app.json.gz.$sfx': owned by uid $ATT_UID" "$TMP/origin.err"
	rm -f "$SH/app.json.gz.$sfx"
done
# root's own sidecar under either name is read, the new name first
printf '%s\n' '{"heapdump_sidecar":1,"pid":4343,"rss_bytes":1,"time":"2001-01-01T00:00:00.000000Z"}' >"$SH/app.json.gz.meta.json"
got=$(XDG_CACHE_HOME="$TMP/xdg" ruby -rheapdump -e 'p HeapDump.load(ARGV[0]).send(:origin)' "$SH/app.json.gz" 2>"$TMP/origin.err")
check origin/own-old-name '[4343, "2001-01-01T00:00:00.000000Z", nil]' "$got"
printf '%s\n' '{"heapdump_sidecar":1,"pid":4444,"rss_bytes":1,"time":"2001-01-01T00:00:01.000000Z","gc_compact_count":3}' >"$SH/app.json.gz.hdmeta"
got=$(XDG_CACHE_HOME="$TMP/xdg" ruby -rheapdump -e 'p HeapDump.load(ARGV[0]).send(:origin)' "$SH/app.json.gz" 2>"$TMP/origin.err")
check origin/own-new-name-first '[4444, "2001-01-01T00:00:01.000000Z", 3]' "$got"
exit 0
