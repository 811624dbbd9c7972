#!/bin/sh
# heapdump roots-of, path and subgraph-of on the leak fixtures (the leaked
# objects of data/dumps/leak_expected.json are kept alive by
# LeakyCache::CACHE) and on small hand-made dumps: outputs are valid
# NDJSON closed under references, the same from a dump, a store and
# stdin; paths start at a root category and end at the target; usage
# errors exit 2.
. "$(dirname "$0")/../lib.sh"
needs jq jq

D="$DATA/leak_after.json"
[ -f "$D" ] || { notok fixtures "$D is missing"; exit 1; }
H=$HEAPDUMP

# the leaked objects, as an NDJSON selection (--from)
jq -c '.leaked.objects[] | {address: .[0], type: .[1]}' \
	"$DATA/leak_expected.json" >"$TMP/leaked.json"
nleaked=$(wc -l <"$TMP/leaked.json" | tr -d ' ')

# closed NAME FILE: every reference of FILE's records is a record of FILE
closed() {
	bad=$(jq -s '[.[] | select(.address) | .address] as $a |
		($a | map({(.): 1}) | add // {}) as $set |
		[.[] | (.references // [])[] | select($set[.] | not)] | length' "$2")
	check "$1" 0 "$bad"
}

check_rc roots-of/exit 0 "$H" roots-of -q "$D" --from "$TMP/leaked.json"
cp "$TMP/out" "$TMP/r.json"
if jq -c . "$TMP/r.json" >/dev/null 2>&1; then ok roots-of/jq; else
	notok roots-of/jq "the output does not parse"; fi
closed roots-of/closed "$TMP/r.json"
jq -r .address "$TMP/leaked.json" >"$TMP/want-addr"
jq -r 'select(.address) | .address' "$TMP/r.json" >"$TMP/got-addr"
check roots-of/targets-kept "$nleaked" "$(grep -cxFf "$TMP/got-addr" "$TMP/want-addr")"
# the path goes through the LeakyCache class and its CACHE hash
jq -r 'select(.type == "CLASS" and .name == "LeakyCache") | .references[]' \
	"$TMP/r.json" >"$TMP/cache-refs"
cache=$(jq -r 'select(.type == "HASH") | .address' "$TMP/r.json" |
	grep -xFf "$TMP/cache-refs" | head -1)
check roots-of/leakycache-class 1 \
	"$(jq -c 'select(.type == "CLASS" and .name == "LeakyCache")' "$TMP/r.json" | wc -l | tr -d ' ')"
check roots-of/cache-hash HASH \
	"$(jq -r --arg a "$cache" 'select(.address == $a) | .type' "$TMP/r.json" 2>/dev/null)"
# the hash holds the leaked Request objects
check roots-of/cache-holds-requests 10 \
	"$(jq -r --arg a "$cache" 'select(.address == $a) | .references[]' "$TMP/r.json" |
	   while read -r a; do jq -r --arg a "$a" 'select(.address == $a and .type == "OBJECT") | .address' "$TMP/r.json"; done | wc -l | tr -d ' ')"
check_grep roots-of/root-lines '^\{"type":"ROOT", "root":"' "$TMP/r.json"

# heapdump stats reads the output back
check_rc roots-of/stats-reads 0 "$H" stats -q -f json "$TMP/r.json"
check roots-of/stats-objects "$(grep -vc '"type":"ROOT"' "$TMP/r.json")" \
	"$(jq .totals.objects "$TMP/out")"

# the output is a dump of its own: roots-of on it gives it back
"$H" roots-of -q "$TMP/r.json" --from "$TMP/leaked.json" >"$TMP/again.json" 2>/dev/null
check roots-of/round-trip "" "$(cmp "$TMP/r.json" "$TMP/again.json" 2>&1)"

# all ancestors: a superset
"$H" roots-of -q --all-ancestors "$D" --from "$TMP/leaked.json" >"$TMP/all.json"
closed roots-of/all-ancestors-closed "$TMP/all.json"
check roots-of/all-ancestors-superset 0 \
	"$(jq -r 'select(.address) | .address' "$TMP/r.json" | sort >"$TMP/a"
	   jq -r 'select(.address) | .address' "$TMP/all.json" | sort >"$TMP/b"
	   comm -23 "$TMP/a" "$TMP/b" | wc -l | tr -d ' ')"
"$H" roots-of -q --skip-weak "$D" --from "$TMP/leaked.json" >"$TMP/weak.json"
check roots-of/skip-weak-same "" "$(cmp "$TMP/r.json" "$TMP/weak.json" 2>&1)"

# a store and standard input give the same output as the dump
"$H" index -q "$D" -o "$TMP/leak.hds"
"$H" roots-of -q "$TMP/leak.hds" --from "$TMP/leaked.json" >"$TMP/s.json"
check roots-of/store-same "" "$(cmp "$TMP/r.json" "$TMP/s.json" 2>&1)"
"$H" roots-of -q - --from "$TMP/leaked.json" <"$D" >"$TMP/in.json"
check roots-of/stdin-same "" "$(cmp "$TMP/r.json" "$TMP/in.json" 2>&1)"

# -o: atomic, the same bytes, nothing left behind
mkdir "$TMP/o"
check_rc roots-of/o-exit 0 "$H" roots-of -q "$D" --from "$TMP/leaked.json" -o "$TMP/o/r.json"
check roots-of/o-same "" "$(cmp "$TMP/r.json" "$TMP/o/r.json" 2>&1)"
check roots-of/o-no-temp "r.json" "$(ls "$TMP/o")"
check_rc roots-of/o-bad-dir 1 "$H" roots-of -q "$D" --class Request -o "$TMP/nodir/r.json"
check roots-of/o-bad-dir-nothing "" "$(ls "$TMP/nodir" 2>/dev/null)"

# the summary and the class selection
check_rc roots-of/summary 0 "$H" roots-of "$D" --class Request
check_grep roots-of/summary-line 'target\(s\), [0-9,]+ object\(s\) written' "$TMP/err"

# unreached targets are reported, not dropped
printf '%s\n' '{"type":"ROOT", "root":"vm", "references":["0x10"]}' \
	'{"address":"0x10", "type":"OBJECT", "references":["0x20"]}' \
	'{"address":"0x20", "type":"STRING"}' \
	'{"address":"0x30", "type":"STRING", "references":["0x20"]}' >"$TMP/small.json"
check_rc roots-of/unreached-exit 0 "$H" roots-of -q "$TMP/small.json" --type STRING
check_grep roots-of/unreached-said '1 target no GC root reaches \(not written\): 0x30' "$TMP/err"
check roots-of/unreached-kept "0x10 0x20" "$(jq -r 'select(.address) | .address' "$TMP/out" | tr '\n' ' ' | sed 's/ $//')"
check roots-of/unreached-refs '["0x20"]' "$(jq -c 'select(.address == "0x10") | .references' "$TMP/out")"
check_rc roots-of/addresses-operands 0 "$H" roots-of -q "$TMP/small.json" 0x20 0x10
check roots-of/addresses-operands-out 2 "$(grep -c address "$TMP/out")"

# a partial dump has no roots: a clear error
check_rc roots-of/partial 1 "$H" roots-of -q "$DATA/ok_ruby3.1_since.json" --type STRING
check_grep roots-of/partial-said 'partial dump' "$TMP/err"

# usage errors
check_rc usage/no-selection 2 "$H" roots-of "$D"
check_rc usage/no-input 2 "$H" roots-of
check_rc usage/bad-option 2 "$H" roots-of --nope "$D" --class Request
check_rc usage/bad-generation 2 "$H" roots-of "$D" --generation x
check_rc usage/path-format 2 "$H" path -f xml "$D" --class Request
check_rc usage/path-no-selection 2 "$H" path "$D"
check_rc usage/subgraph-no-selection 2 "$H" subgraph-of "$D"
check_rc usage/subgraph-depth 2 "$H" subgraph-of "$D" --class Request --max-depth x
check_rc picks-nothing 1 "$H" roots-of "$D" --class NoSuchClass
check_rc missing-input 1 "$H" roots-of "$TMP/none.json" --class Request

# path: the root category first, the target last
t=$(jq -r 'select(.type == "OBJECT") | .address' "$TMP/leaked.json" | head -1)
check_rc path/exit 0 "$H" path -q "$D" "$t"
check_grep path/root-first '^root [a-z_]+$' "$TMP/out"
check path/root-first-line root "$(head -1 "$TMP/out" | cut -d' ' -f1)"
check path/target-last "$t Request (OBJECT)" "$(tail -1 "$TMP/out" | sed 's/^ *//' | cut -d' ' -f1-3)"
check_grep path/through-cache '^  0x[0-9a-f]+ LeakyCache \(CLASS\)' "$TMP/out"
check_grep path/site 'leak\.rb:[0-9]+ in new$' "$TMP/out"
"$H" path -q --format json "$D" "$t" >"$TMP/p.json"
check path/json-root "vm" "$(jq -r .root "$TMP/p.json")"
check path/json-last "$t" "$(jq -r '.path[-1].address' "$TMP/p.json")"
check path/json-length "$(jq '.path | length' "$TMP/p.json")" "$(jq .length "$TMP/p.json")"
check path/store-same "$(cat "$TMP/out")" "$("$H" path -q "$TMP/leak.hds" "$t")"
# several objects: one path each, capped by --max
"$H" path "$D" --class Request --max 3 >"$TMP/p3" 2>"$TMP/err"
check path/max-3 3 "$(grep -c '^root ' "$TMP/p3")"
check_grep path/max-said 'more selected object\(s\) not shown' "$TMP/err"
check path/max-0 "$("$H" stats -q -b class -n 0 -f tsv "$D" | awk -F '\t' '$4 == "Request" { print $2 }')" \
	"$("$H" path -q "$D" --class Request --max 0 -f json | wc -l | tr -d ' ')"
check_rc path/unreached 1 "$H" path -q "$TMP/small.json" 0x30
check_grep path/unreached-said 'no GC root reaches 0x30' "$TMP/err"

# subgraph-of: a leaked Request and what it owns
check_rc subgraph/exit 0 "$H" subgraph-of -q "$D" "$t"
cp "$TMP/out" "$TMP/sg.json"
closed subgraph/closed "$TMP/sg.json"
n=$(jq -r 'select(.address) | .address' "$TMP/sg.json" | wc -l | tr -d ' ')
[ "$n" -ge 6 ] && ok subgraph/owned || notok subgraph/owned "$n objects, want 6 or more"
check subgraph/depth-0-unlimited "" \
	"$("$H" subgraph-of -q --max-depth 0 "$D" "$t" | cmp - "$TMP/sg.json" 2>&1)"
grep "\"address\":\"$t\"" "$D" >"$TMP/t.json"
check subgraph/depth-1 "$(jq '[.references[]] | unique | length + 1' "$TMP/t.json")" \
	"$("$H" subgraph-of -q --max-depth 1 "$D" "$t" | jq -r 'select(.address) | .address' | wc -l | tr -d ' ')"
"$H" subgraph-of -q "$D" "$t" -o "$TMP/o/sg.json"
check subgraph/o-same "" "$(cmp "$TMP/sg.json" "$TMP/o/sg.json" 2>&1)"

# -o to a pipe or device writes to it, never renames a file over it
# (timeout ends the reader if the command never opens the FIFO)
if command -v timeout >/dev/null 2>&1 && mkfifo "$TMP/fifo" 2>/dev/null; then
	timeout 20 cat "$TMP/fifo" >"$TMP/fifo-out" &
	check_rc o-fifo 0 "$H" roots-of -q "$D" --from "$TMP/leaked.json" -o "$TMP/fifo"
	wait
	if [ -p "$TMP/fifo" ]; then ok o-fifo-still-fifo; else
		notok o-fifo-still-fifo "the FIFO was replaced by a file"; fi
	check o-fifo-same "" "$(cmp "$TMP/r.json" "$TMP/fifo-out" 2>&1)"
fi

# --with-paths: each selected object's record carries "root_path", the
# chain `path` prints for it ("root CATEGORY [NAME]" joined to the hops
# by " -> ", reference names included); every other line, and each
# target line up to the added member, is byte for byte what roots-of
# writes without it; the output still reads as a dump.
for N in "$DATA/named_ruby3.1_names_after.json.gz" "$D"; do
	tag=$(basename "$N" .json.gz)
	tag=${tag%.json}
	"$H" roots-of -q "$N" --class Request >"$TMP/wp0.json"
	check_rc "with-paths/$tag/exit" 0 "$H" roots-of -q "$N" --class Request --with-paths
	cp "$TMP/out" "$TMP/wp1.json"
	"$H" path -q -n 0 -f json "$N" --class Request >"$TMP/wp.path"
	"$H" path -q -n 0 "$N" --class Request >"$TMP/wp.text"
	verdict=$(python3 - "$TMP/wp0.json" "$TMP/wp1.json" "$TMP/wp.path" "$TMP/wp.text" <<'PY'
import json, sys
plain = open(sys.argv[1], 'rb').read().split(b'\n')
withp = open(sys.argv[2], 'rb').read().split(b'\n')
paths = [json.loads(l) for l in open(sys.argv[3])]
text = open(sys.argv[4]).read().split('\n\n')
if len(plain) != len(withp):
    print('line counts differ'); sys.exit()
# text paths: "root CAT [NAME]" then, when named, the chain line, which
# is what root_path must read; without names, the hop classes
chains = {}
for block in text:
    lines = block.strip('\n').split('\n')
    target = lines[-1].split()[0]
    chains[target] = lines
added = 0
for a, b in zip(plain, withp):
    if a == b:
        continue
    if not (a.endswith(b'}') and b.startswith(a[:-1] + b', "root_path":')):
        print('a line changed beyond the member: %r' % b[:120]); sys.exit()
    rec = json.loads(b)
    rp = rec['root_path']
    p = next((p for p in paths if p['target'] == rec['address']), None)
    if p is None or p['root'] is None:
        print('root_path on an unreached target %s' % rec['address']); sys.exit()
    head = 'root ' + p['root'] + (' ' + p['root_name'] if p.get('root_name') else '')
    lines = chains[rec['address']]
    if lines[0] != head:
        print('path printed %r, expected head %r' % (lines[0], head)); sys.exit()
    if len(lines) > p['length'] + 1:     # a chain line was printed
        want = head + ' -> ' + lines[1].strip()
        if rp != want:
            print('root_path %r != path chain %r' % (rp, want)); sys.exit()
    elif not rp.startswith(head + ' -> ') or rp.count(' -> ') != p['length']:
        print('root_path %r: %d hops, path has %d' % (rp, rp.count(' -> '), p['length'])); sys.exit()
    added += 1
reached = sum(1 for p in paths if p['root'] is not None)
print('ok %d' % added if added == reached and added > 0 else
      'root_path on %d records, %d targets reached' % (added, reached))
PY
)
	case $verdict in
	ok*) ok "with-paths/$tag/member ($verdict)" ;;
	*) notok "with-paths/$tag/member" "$verdict" ;;
	esac
	"$H" stats -q -f json "$TMP/wp0.json" 2>&1 | jq -c 'del(.dump)' >"$TMP/wp0.stats"
	"$H" stats -q -f json "$TMP/wp1.json" 2>&1 | jq -c 'del(.dump)' >"$TMP/wp1.stats"
	check "with-paths/$tag/reads-as-dump" "" "$(cmp "$TMP/wp0.stats" "$TMP/wp1.stats" 2>&1)"
done
"$H" roots-of -q "$DATA/named_ruby3.1_names_after.json.gz" --class Request --with-paths >"$TMP/wpn.json"
check with-paths/named-hop "$(grep -c '"root_path":' "$TMP/wpn.json")" "$(grep -c '"root_path":"root vm -> Binding -> IMEMO/env -> Array \[[0-9]\] -> Request"' "$TMP/wpn.json")"
