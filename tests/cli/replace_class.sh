#!/bin/sh
# tests/cli/replace_class.sh - heapdump replace-class on the real fixtures
# of data/dumps: valid JSON out, one line per record, the right names and
# class_address, ICLASS names, --add-ref, atomic --in-place and -o, usage
# errors, and the same stats before and after.
. "$(dirname "$0")/../lib.sh"

needs jq jq
needs ruby ruby

# The fixtures every check runs on: dumps that read (gzipped too), and
# the invalid ones, which must come out as valid JSON too.
set --
for f in "$DATA"/ok_*.json "$DATA"/ok_*.json.gz "$DATA"/edge_*.json \
	"$DATA"/edge_*.json.gz "$DATA"/bad_*.json; do
	[ -f "$f" ] && set -- "$@" "$f"
done
if [ $# -eq 0 ]; then
	notok fixtures "no data/dumps/ok_*.json or edge_*.json to test on"
	exit 1
fi
# The one the detailed checks use: a traced 3.1 dump, else the first.
MAIN=$1
for f in "$DATA"/ok_ruby3.1_traced.json "$DATA"/ok_ruby3.1*.json; do
	if [ -f "$f" ]; then MAIN=$f; break; fi
done

# cat_dump FILE: the dump's text, decompressed
cat_dump() {
	case "$1" in *.gz) gzip -dc "$1" ;; *) cat "$1" ;; esac
}

# The Ruby side of the comparison: the input (its valid lines) against
# the output of replace-class and of replace-class --add-ref. Prints
# counts as "key=value" lines and the first mismatches on stderr.
cat >"$TMP/check.rb" <<'EOF'
require "json"

# as the reader (and so the output) sees them: without a CR before the
# newline, nor the heap_dump gem's "[" or "," framing
def lines(path)
  File.binread(path).split("\n", -1).tap { |a| a.pop if a.last == "" }
      .map { |l| l.chomp("\r").sub(/\A[ \t]*[\[,][ \t]*(?=\{)/, "") }
end

def parse(raw)
  JSON.parse(raw)
rescue JSON::ParserError, EncodingError
  nil
end

input, out, out_ref = ARGV
ins = {}
classes = {}
unreadable = {} # addresses of the records Ruby cannot parse
lines(input).each do |raw|
  rec = parse(raw)
  unless rec
    # (JSON.parse may have retagged it UTF-8)
    raw.b.scan(/"address":"(0x\h+)"/n) { |a| unreadable[a[0]] = true }
    next
  end
  next unless rec.is_a?(Hash) && rec["address"]
  key = "#{rec["address"]}|#{rec["type"]}"
  ins[key] = [rec, raw]
  classes[rec["address"]] = rec if %w[CLASS MODULE ICLASS].include?(rec["type"])
end

n = Hash.new(0)
bad = []
note = ->(what) { n["bad"] += 1; bad << what if bad.size < 5 }
refs = {}
lines(out_ref).each do |raw|
  rec = JSON.parse(raw)
  refs["#{rec["address"]}|#{rec["type"]}"] = rec if rec["address"]
end

lines(out).each do |raw|
  o = JSON.parse(raw)
  next unless o["address"]
  key = "#{o["address"]}|#{o["type"]}"
  i, iraw = ins[key]
  next n["not_compared"] += 1 unless i
  n["compared"] += 1
  r = refs[key] or next note.("#{key}: not in the --add-ref output")
  unless i.key?("class")
    note.("#{key}: class appeared") if o.key?("class")
    note.("#{key}: raw line changed") if raw != iraw
    next
  end
  c = classes[i["class"]]
  next n["unknown_class"] += 1 if !c && unreadable[i["class"]]
  if !c
    n["unresolved"] += 1
    note.("#{key}: unresolved class changed") if o["class"] != i["class"] || o.key?("class_address")
    note.("#{key}: raw line changed") if raw != iraw
    note.("#{key}: --add-ref changed refs") if r["references"] != i["references"]
    next
  end
  n["rewritten"] += 1
  note.("#{key}: class_address #{o["class_address"].inspect} != #{i["class"]}") if o["class_address"] != i["class"]
  note.("#{key}: class still a pointer") if o["class"] == i["class"] || o["class"] =~ /\A0x\h+\z/
  if c["name"] && !c["singleton"] && c["type"] != "ICLASS"
    n["named"] += 1
    if o["class"] == c["name"]
      n["named_ok"] += 1
      n["iclass_ok"] += 1 if i["type"] == "ICLASS"
    else
      note.("#{key}: class #{o["class"].inspect}, expected #{c["name"].inspect}")
    end
  end
  n["iclass"] += 1 if i["type"] == "ICLASS" && c["type"] != "ICLASS" && c["name"] && !c["singleton"]
  # every other byte as it was
  want = iraw.sub("\"class\":#{i["class"].to_json}",
                  "\"class\":#{o["class"].to_json}, \"class_address\":#{i["class"].to_json}")
  note.("#{key}: bytes differ:\n  #{raw}\n  #{want}") if raw != want
  # --add-ref: exactly one more reference, the class
  want_refs = (i["references"] || []) + [i["class"]]
  note.("#{key}: --add-ref references #{r["references"].inspect}") if r["references"] != want_refs
end
n.sort.each { |k, v| puts "#{k}=#{v}" }
bad.each { |b| warn b }
EOF

# get KEY FILE: a count printed by check.rb
get() {
	v=$(sed -n "s/^$1=//p" "$2")
	echo "${v:-0}"
}

i=0
for f in "$@"; do
	i=$((i + 1))
	name=$(basename "$f")
	out="$TMP/out$i.json"
	"$HEAPDUMP" replace-class -q "$f" -o "$out" 2>"$TMP/err$i"
	rc=$?
	# a fixture that cannot be read at all says so in its .expect
	# (edge_empty: not a heap dump): that exit, and no output
	xrc=$(sed -n 's/^exit=//p' "$f.expect" 2>/dev/null)
	check "$name/exit" "${xrc:-0}" "$rc"
	if [ -n "$xrc" ]; then
		if [ -e "$out" ]; then notok "$name/no-output" "$out written"
		else ok "$name/no-output"; fi
		continue
	fi
	[ "$rc" -eq 0 ] || { cat "$TMP/err$i"; continue; }
	# every output line is valid JSON
	if jq -c . "$out" >"$TMP/jq$i" 2>"$TMP/jqerr$i"; then ok "$name/jq"; else
		notok "$name/jq" "$(head -c 300 "$TMP/jqerr$i")"
	fi
	# one line per record: every input line that starts a record. A
	# repaired or skipped line may have been joined to another or
	# dropped, so with problems it is a range.
	probs=$(sed -n 's/.* \([0-9]*\) line(s) repaired, \([0-9]*\) skipped.*/\1 + \2/p' \
		"$TMP/err$i")
	probs=$((${probs:-0}))
	starts=$(cat_dump "$f" | grep -c '^[[,]*{')
	lines=$(wc -l <"$out" | tr -d ' ')
	if [ "$probs" -eq 0 ]; then
		check "$name/lines" "$starts" "$lines"
	elif [ "$lines" -le "$starts" ] && [ "$lines" -ge $((starts - probs)) ]; then
		ok "$name/lines"
	else
		notok "$name/lines" "$lines lines for $starts records, $probs problems"
	fi
	check "$name/jq-lines" "$(wc -l <"$out" | tr -d ' ')" \
		"$(wc -l <"$TMP/jq$i" | tr -d ' ')"
	# the same statistics (the first line names the file)
	"$HEAPDUMP" stats -q -n 0 "$f" 2>/dev/null | sed 1d >"$TMP/s_in$i"
	"$HEAPDUMP" stats -q -n 0 "$out" 2>/dev/null | sed 1d >"$TMP/s_out$i"
	if [ -s "$TMP/s_in$i" ] && cmp -s "$TMP/s_in$i" "$TMP/s_out$i"; then
		ok "$name/same-stats"
	else
		notok "$name/same-stats" "$(diff "$TMP/s_in$i" "$TMP/s_out$i" | head -c 300)"
	fi
	# names and class_address against Ruby's reading of the input
	case "$f" in *.gz) continue ;; esac
	"$HEAPDUMP" replace-class -q --add-ref "$f" -o "$TMP/ref$i.json" 2>/dev/null
	ruby "$TMP/check.rb" "$f" "$out" "$TMP/ref$i.json" >"$TMP/rb$i" 2>"$TMP/rberr$i"
	if [ "$(get compared "$TMP/rb$i")" = 0 ]; then
		# heap_dump, memprof, empty: no dump_all object to compare
		if grep -q '"address":' "$f"; then
			notok "$name/ruby-compare" "nothing compared: $(head -c 300 "$TMP/rberr$i")"
		else
			ok "$name/ruby-compare"
		fi
		continue
	fi
	check "$name/ruby-compare" "0 $(get named "$TMP/rb$i")" \
		"$(get bad "$TMP/rb$i") $(get named_ok "$TMP/rb$i")"
	[ "$(get bad "$TMP/rb$i")" = 0 ] || head -20 "$TMP/rberr$i"
	case "$name" in ok_*)
		if [ "$(get rewritten "$TMP/rb$i")" -gt 0 ]; then ok "$name/rewrote"
		else notok "$name/rewrote" "no class was rewritten: $(tr '\n' ' ' <"$TMP/rb$i")"
		fi ;;
	esac
	check "$name/iclass" "$(get iclass "$TMP/rb$i")" \
		"$(get iclass_ok "$TMP/rb$i")"
done

# A damaged gzip stream: what could be read, as valid JSON, or a failure
# that leaves no output.
for f in "$DATA"/bad_*.json.gz; do
	[ -f "$f" ] || continue
	name=$(basename "$f")
	rm -f "$TMP/gzbad.json"
	"$HEAPDUMP" replace-class -q "$f" -o "$TMP/gzbad.json" 2>"$TMP/err"
	rc=$?
	if [ $rc -eq 1 ]; then
		check "$name/failed-no-output" "" \
			"$(cd "$TMP" && ls gzbad.json* 2>/dev/null)"
	elif [ $rc -eq 0 ] && jq -c . "$TMP/gzbad.json" >/dev/null 2>&1; then
		ok "$name/read-valid-json"
	else
		notok "$name/read" "exit $rc: $(head -c 300 "$TMP/err")"
	fi
done

# ---- the detailed checks, on MAIN ----
m=$(basename "$MAIN")
if ! "$HEAPDUMP" replace-class -q "$MAIN" -o "$TMP/main.json" 2>"$TMP/err"; then
	notok "$m/run" "$(head -c 300 "$TMP/err")"
	exit 1
fi

# ICLASS records exist and were named after their module
n=$(jq -r 'select(.type == "ICLASS" and (.class_address // "" | startswith("0x"))
	and (.class | startswith("0x") | not)) | .class' "$TMP/main.json" | wc -l)
if [ "$n" -gt 0 ]; then ok "$m/iclass-named"; else
	notok "$m/iclass-named" "no ICLASS record got its module's name"
fi

# --add-ref: exactly one more reference per rewritten record
rw=$(grep -c '"class_address":' "$TMP/main.json")
"$HEAPDUMP" replace-class -q --add-ref "$MAIN" -o "$TMP/main_ref.json" 2>/dev/null
a=$(jq '.references // [] | length' "$TMP/main.json" | jq -s add)
b=$(jq '.references // [] | length' "$TMP/main_ref.json" | jq -s add)
check "$m/add-ref-count" "$((a + rw))" "$b"
n=$(jq -r 'select(.class_address) | select(.references[-1] != .class_address)
	| .address' "$TMP/main_ref.json" | wc -l)
check "$m/add-ref-last-is-class" 0 "$n"

# standard output, stdin (spooled in $TMPDIR, removed), gzip
"$HEAPDUMP" replace-class -q "$MAIN" >"$TMP/stdout.json" 2>/dev/null
check "$m/stdout" 0 "$(cmp -s "$TMP/stdout.json" "$TMP/main.json"; echo $?)"
mkdir "$TMP/spool"
cat_dump "$MAIN" | TMPDIR="$TMP/spool" "$HEAPDUMP" replace-class -q - \
	-o "$TMP/stdin.json" 2>/dev/null
check "$m/stdin" 0 "$(cmp -s "$TMP/stdin.json" "$TMP/main.json"; echo $?)"
check "$m/stdin-spool-removed" "" "$(ls -A "$TMP/spool")"
cat_dump "$MAIN" | gzip -c >"$TMP/main.json.gz"
"$HEAPDUMP" replace-class -q "$TMP/main.json.gz" -o "$TMP/gz.json" 2>/dev/null
check "$m/gzip" 0 "$(cmp -s "$TMP/gz.json" "$TMP/main.json"; echo $?)"

# its own output comes back unchanged
"$HEAPDUMP" replace-class -q "$TMP/main.json" -o "$TMP/again.json" 2>/dev/null
check "$m/idempotent" 0 "$(cmp -s "$TMP/again.json" "$TMP/main.json"; echo $?)"

# --in-place: a new file renamed over the input, same mode
cat_dump "$MAIN" >"$TMP/ip.json"
chmod 640 "$TMP/ip.json"
ino=$(stat -c %i "$TMP/ip.json")
check_rc "$m/in-place" 0 "$HEAPDUMP" replace-class -q --in-place "$TMP/ip.json"
check "$m/in-place-content" 0 "$(cmp -s "$TMP/ip.json" "$TMP/main.json"; echo $?)"
check "$m/in-place-mode" 640 "$(stat -c %a "$TMP/ip.json")"
if [ "$(stat -c %i "$TMP/ip.json")" != "$ino" ]; then ok "$m/in-place-renamed"; else
	notok "$m/in-place-renamed" "the input was rewritten in its inode, not replaced"
fi
check "$m/in-place-no-temp" "ip.json" "$(cd "$TMP" && ls ip.json*)"
# the input is never modified otherwise
cat_dump "$MAIN" >"$TMP/keep.json"
"$HEAPDUMP" replace-class -q "$TMP/keep.json" -o "$TMP/keep.out" 2>/dev/null
check "$m/input-untouched" 0 "$(cat_dump "$MAIN" | cmp -s - "$TMP/keep.json"; echo $?)"
check_rc "$m/output-is-input" 2 "$HEAPDUMP" replace-class "$TMP/keep.json" \
	-o "$TMP/keep.json"
check "$m/output-is-input-untouched" 0 \
	"$(cat_dump "$MAIN" | cmp -s - "$TMP/keep.json"; echo $?)"

# -o into a read-only directory fails with 1 and leaves nothing. root
# writes anywhere, so it runs as nobody; failing that, /proc will do.
mkdir "$TMP/ro"
cp "$TMP/keep.json" "$TMP/ro/in.json"
chmod 644 "$TMP/ro/in.json"
chmod 555 "$TMP/ro"
chmod 755 "$TMP"
as=""
if [ "$(id -u)" = 0 ]; then
	if setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null; then
		as="setpriv --reuid=65534 --regid=65534 --clear-groups"
		rodir=$TMP/ro
	else
		rodir=/proc
	fi
else
	rodir=$TMP/ro
fi
check_rc "$m/read-only-dir" 1 $as "$HEAPDUMP" replace-class -q "$TMP/ro/in.json" \
	-o "$rodir/out.json"
check_grep "$m/read-only-dir-message" "cannot create" "$TMP/err"
check "$m/read-only-dir-empty" "in.json" "$(ls -A "$TMP/ro")"
check "$m/read-only-no-output" "" "$(ls -d "$rodir"/out.json* 2>/dev/null)"
chmod 755 "$TMP/ro"
chmod 700 "$TMP"
# a full disk fails the command
if [ -w /dev/full ]; then
	check_rc "$m/dev-full" 1 "$HEAPDUMP" replace-class -q "$MAIN" -o /dev/full
fi

# -q keeps stderr quiet on a clean dump; without it the unresolved
# pointers are counted
"$HEAPDUMP" replace-class "$MAIN" -o "$TMP/loud.json" 2>"$TMP/loud.err"
if grep -q 'left as they were' "$TMP/loud.err"; then
	ok "$m/unresolved-reported"
elif [ "$(grep -c '"class":"0x' "$TMP/loud.json")" = 0 ]; then
	ok "$m/unresolved-reported" # nothing unresolved to report
else
	notok "$m/unresolved-reported" "no count on stderr: $(head -c 300 "$TMP/loud.err")"
fi
"$HEAPDUMP" replace-class -q "$MAIN" -o "$TMP/quiet.json" 2>"$TMP/quiet.err"
check "$m/quiet" "" "$(grep -v 'repaired\|skipped' "$TMP/quiet.err")"

# usage errors exit 2
check_rc usage-no-dump 2 "$HEAPDUMP" replace-class
check_rc usage-two-dumps 2 "$HEAPDUMP" replace-class "$MAIN" "$MAIN"
check_rc usage-o-and-in-place 2 "$HEAPDUMP" replace-class --in-place \
	-o "$TMP/x.json" "$MAIN"
check_rc usage-stdin-in-place 2 "$HEAPDUMP" replace-class --in-place -
check_rc usage-unknown-option 2 "$HEAPDUMP" replace-class --bogus "$MAIN"
check_rc usage-missing-value 2 "$HEAPDUMP" replace-class "$MAIN" -o
check_rc missing-dump 1 "$HEAPDUMP" replace-class "$TMP/nope.json"
check_rc help 0 "$HEAPDUMP" replace-class --help
check_grep help-text "--add-ref" "$TMP/out"
check_rc help-command 0 "$HEAPDUMP" help replace-class

# a store stands for the dump it indexes; a changed dump is refused
cp "$DATA/ok_ruby3.4_since.json" "$TMP/src.json"
"$HEAPDUMP" index -q "$TMP/src.json" -o "$TMP/src.hds" 2>/dev/null
"$HEAPDUMP" replace-class -q "$TMP/src.json" >"$TMP/from-dump" 2>/dev/null
"$HEAPDUMP" replace-class -q "$TMP/src.hds" >"$TMP/from-store" 2>/dev/null
check store-input-same-output "" "$(cmp "$TMP/from-dump" "$TMP/from-store" 2>&1)"
echo >>"$TMP/src.json"
check_rc store-input-stale 1 "$HEAPDUMP" replace-class -q "$TMP/src.hds"
check_grep store-input-stale-message "changed since it was indexed" "$TMP/err"
check_rc store-input-in-place 2 "$HEAPDUMP" replace-class --in-place "$TMP/src.hds"
