#!/bin/sh
# heapdump query: SQL over a store. The answers equal the other commands'
# (stats --by class, path, the references jq counts in the dump); the
# indexed filters (address, class, type, refs "from" and "to") visit only
# the rows they return (hd_rows_visited(), and EXPLAIN QUERY PLAN); the
# database is read-only (no statement can write, the store file keeps its
# bytes and mtime); the four formats; the shell through a pty (a query,
# history by the up arrow, .tables, .quit); hostile names escaped.
. "$(dirname "$0")/../lib.sh"
needs jq jq
needs python3 python3

D="$DATA/leak_after.json"
[ -f "$D" ] || { notok fixtures "$D is missing"; exit 1; }
H=$HEAPDUMP
S=$TMP/after.hds
"$H" index -q "$D" -o "$S" 2>"$TMP/err" || { notok index "$(cat "$TMP/err")"; exit 1; }

# q SQL [OPTIONS...]: the query's TSV rows, header dropped
q() {
	sql=$1
	shift
	"$H" query -q -f tsv "$@" "$S" "$sql" 2>"$TMP/qerr" | tail -n +2
}

# ---- the command runs ----
check_rc run/exit 0 "$H" query "$S" "select count(*) from objects"
check run/count "$(jq -s '[.[] | select(.address)] | length' "$D")" \
	"$(q 'select count(*) from objects')"
check run/from-dump "$(q 'select count(*), sum(memsize) from objects')" \
	"$("$H" query -q -f tsv "$D" 'select count(*), sum(memsize) from objects' | tail -n +2)"
check_rc run/usage-no-input 2 "$H" query
check_rc run/usage-format 2 "$H" query -f xml "$S" "select 1"
check_rc run/bad-sql 2 "$H" query "$S" "selec 1"
check_grep run/bad-sql-says "SQL error" "$TMP/err"

# ---- the README's columns: every one it names for objects exists ----
# (README.md, "SQL over the heap": "objects (address, type, ...)")
cols=$(tr '\n' ' ' <"$TOP/README.md" | sed -n 's/.*`objects`[[:space:]]*(\([^)]*\)).*/\1/p' |
	tr -d '.' | tr ',' '\n' | tr -d ' ')
check readme/columns-found true "$([ -n "$cols" ] && echo true)"
for c in $cols; do
	"$H" query -q "$S" "select $c from objects limit 1" >/dev/null 2>"$TMP/err" ||
		notok "readme/column-$c" "the README names the column '$c' of objects: $(head -c 200 "$TMP/err")"
done

# ---- the same answers as the other commands ----
# stats --by class (every object: --all) against GROUP BY class
"$H" stats -q --all -n 0 -f tsv --by class "$D" | awk -F'\t' '$1 == "class" { print $4 "\t" $2 "\t" $3 }' |
	sort >"$TMP/stats"
q 'select class, count(*), sum(memsize) from objects group by class' | sort >"$TMP/sql"
if [ -s "$TMP/stats" ] && cmp -s "$TMP/stats" "$TMP/sql"; then ok answers/stats-by-class; else
	notok answers/stats-by-class "$(diff "$TMP/stats" "$TMP/sql" | head -5)"; fi
# the type column against the dump's types
jq -r 'select(.address) | .type' "$D" | sort | uniq -c | awk '{ print $2 "\t" $1 }' >"$TMP/types"
q 'select type, count(*) from objects group by type order by type' >"$TMP/sqltypes"
if cmp -s "$TMP/types" "$TMP/sqltypes"; then ok answers/types; else
	notok answers/types "$(diff "$TMP/types" "$TMP/sqltypes" | head -5)"; fi

# path() against heapdump path: the same objects, root first
"$H" path -q -f json --name LeakyCache "$D" >"$TMP/path.json"
want=$(jq -r '.root + " " + ([.path[].address] | join(" "))' "$TMP/path.json")
got=$(q "select path(address) from objects where name = 'LeakyCache' and type = 'CLASS'" |
	sed 's/ -> [^ ]* / /g; s/ -> / /g')
check answers/path "$want" "$got"
check answers/path-unreached "" \
	"$(q "select path(address) from objects where address = 1")"

# refs against the references jq reads in the dump: the LeakyCache
# class's references, and who references its CACHE hash
cls=$(jq -r 'select(.type == "CLASS" and .name == "LeakyCache") | .address' "$D")
# (man 5 heapdump-store, CLASS REFERENCES: the references of an instance
# of a singleton or anonymous class or module end with its class edge)
jq -r 'select((.type == "CLASS" or .type == "MODULE") and (.singleton or
	(.name // "" | length == 0) or (.name // "" | startswith("#<")))) |
	.address' "$D" >"$TMP/held"
jq -r --arg a "$cls" --rawfile held "$TMP/held" 'select(.address == $a) |
	(.references[], (.class | select(. as $c | $held | split("\n") |
	index($c))))' "$D" >"$TMP/jqrefs"
q "select hexaddr(\"to\") from refs where \"from\" = '$cls' order by k" >"$TMP/sqlrefs"
if [ -s "$TMP/jqrefs" ] && cmp -s "$TMP/jqrefs" "$TMP/sqlrefs"; then ok answers/refs-from; else
	notok answers/refs-from "$(diff "$TMP/jqrefs" "$TMP/sqlrefs" | head -5)"; fi
hash=$(jq -r 'select(.type == "HASH") | .address' "$D" | grep -xFf "$TMP/jqrefs" | head -1)
jq -r --arg a "$hash" 'select(.references and (.references | index($a))) |
	.address as $f | .references[] | select(. == $a) | $f' "$D" | sort >"$TMP/jqwho"
q "select hexaddr(\"from\") from refs where \"to\" = '$hash'" | sort >"$TMP/sqlwho"
if [ -s "$TMP/jqwho" ] && cmp -s "$TMP/jqwho" "$TMP/sqlwho"; then ok answers/refs-to; else
	notok answers/refs-to "$(diff "$TMP/jqwho" "$TMP/sqlwho" | head -5)"; fi
# every resolved reference of the dump is a row of refs, and so is
# every class edge
edges=$(jq -s --rawfile held "$TMP/held" '([.[] | select(.address) | .address] | map({(.): 1}) | add) as $set |
	($held | split("\n") | map(select(length > 0)) | map({(.): 1}) | add) as $h |
	([.[] | select(.address) | (.references // [])[] | select($set[.])] | length) +
	([.[] | select(.address and .class and $h[.class] and
		(.type | IN("NONE", "IMEMO", "NODE", "ZOMBIE") | not))] | length)' "$D")
check answers/refs-total "$edges" "$(q 'select count(*) from refs')"
check answers/refs-class "$(jq -s --rawfile held "$TMP/held" '($held | split("\n") | map(select(length > 0)) | map({(.): 1}) | add) as $h |
	[.[] | select(.address and .class and $h[.class] and
		(.type | IN("NONE", "IMEMO", "NODE", "ZOMBIE") | not))] | length' "$D")" \
	"$(q "select count(*) from refs where name = '(class)' and inferred = 1")"
check answers/roots "$(jq -s '[.[] | select(.type == "ROOT") | .references[]] | length' "$D")" \
	"$(q 'select count(*) from roots')"
# retained() against top's retained size (top --format json)
if "$H" top -q -n 1 -f json "$D" >"$TMP/top.json" 2>"$TMP/err"; then
	ta=$(jq -r '.objects[0].object.address' "$TMP/top.json")
	tr=$(jq -r '.objects[0].retained_memsize' "$TMP/top.json")
	check answers/retained "$tr" "$(q "select retained('$ta')")"
else
	notok answers/retained "top failed: $(head -c 300 "$TMP/err")"
fi
# the retained column: NULL without a stored tree, top's with one
check answers/retained-column-null 0 \
	"$(q 'select count(retained) from objects')"
"$H" index -q --dominators "$D" -o "$TMP/dom.hds"
check answers/retained-column "$tr" \
	"$("$H" query -q -f tsv "$TMP/dom.hds" "select retained from objects where address = '$ta'" | tail -1)"

# the value column: read back from the dump, as jq reads it
check answers/values "$(jq -rs '[.[] | select(.type == "STRING" and .value != null) | .value] | [length, (unique | length)] | join(" ")' "$D")" \
	"$(q "select count(value), count(distinct value) from objects where type = 'STRING'" | tr '\t' ' ')"
check answers/value-store "$(q "select value from objects where type = 'STRING' and value is not null order by address limit 1")" \
	"$("$H" query -q -f tsv "$D" "select value from objects where type = 'STRING' and value is not null order by address limit 1" | tail -1)"
# a gzip dump has no offsets to read at: NULL, not a wrong value
check answers/value-gzip 0 "$("$H" query -q -f tsv "$DATA/ok_ruby3.1_traced.json.gz" "select count(value) from objects" 2>/dev/null | tail -1)"

# reference names (issue 13's ref_names): refs.name by position, also
# through the reverse index where one object holds another twice; the
# root's name; path() prints them after each hop
cat >"$TMP/names.json" <<'EOF'
{"type":"ROOT","root":"global_tbl","references":["0x1000"],"ref_names":["$CACHE"]}
{"address":"0x1000","type":"HASH","class":"0x3000","references":["0x1010","0x1010","0x1020"],"ref_names":["[\"a\"]",1,null],"memsize":40}
{"address":"0x1010","type":"STRING","class":"0x3008","bytesize":1,"value":"x","memsize":40}
{"address":"0x1020","type":"STRING","class":"0x3008","bytesize":1,"value":"y","memsize":40}
EOF
nq() { "$H" query -q -f tsv "$TMP/names.json" "$1" | tail -n +2 | tr '\t\n' ', ' | sed 's/ $//'; }
check names/from '0,["a"],0 1,[1],0 2,,' "$(nq 'select k, name, inferred from refs where "from" = 0x1000 order by k')"
check names/to '0,["a"] 1,[1]' "$(nq 'select k, name from refs where "to" = 0x1010')"
check names/scan '["a"] [1]' "$(nq 'select name from refs where name is not null')"
check names/root 'global_tbl,4096,$CACHE' "$(nq 'select * from roots')"
check names/path 'global_tbl $CACHE -> #<unknown:0x3000> 0x1000 ["a"] -> #<unknown:0x3008> 0x1010' \
	"$(nq 'select path(0x1010)')"
# a dump without names: only the inferred class constants (::Name) and
# class edges ((class))
check names/inferred-only 0 "$(q "select count(*) from refs where name is not null and (inferred = 0 or (name not like '::%' and name <> '(class)'))")"

# ---- the indexed filters visit only their rows ----
# visits SQL: rows the tables produced for SQL
visits() {
	q "select hd_rows_visited(); $1; select hd_rows_visited()" |
		awk 'NR == 1 { a = $1 } { last = $1 } END { print last - a }'
}
n=$(q "select count(*) from objects where class = 'String'")
check index/class "$n" "$(visits "select count(*) from objects where class = 'String'")"
n=$(q "select count(*) from objects where type = 'CLASS'")
check index/type "$n" "$(visits "select count(*) from objects where type = 'CLASS'")"
check index/address 1 "$(visits "select * from objects where address = '$cls'")"
check index/address-int 1 "$(visits "select * from objects where address = addr('$cls')")"
check index/address-missing 0 "$(visits "select * from objects where address = 12345")"
n=$(wc -l <"$TMP/jqrefs" | tr -d ' ')
check index/refs-from "$n" "$(visits "select * from refs where \"from\" = '$cls'")"
n=$(wc -l <"$TMP/jqwho" | tr -d ' ')
check index/refs-to "$n" "$(visits "select * from refs where \"to\" = '$hash'")"
# who references a class's instances: the join probes refs by "to"
check index/join "$(q "select count(*) from refs r join objects o on o.address = r.\"to\" where o.class = 'LeakyCache::Entry'")" \
	"$(q "select count(*) from refs where \"to\" in (select address from objects where class = 'LeakyCache::Entry')")"
plan=$(q "explain query plan select * from objects where class = 'String'")
case $plan in *"INDEX 2"*) ok index/plan-class ;; *) notok index/plan-class "$plan" ;; esac
plan=$(q "explain query plan select class, count(*) from objects group by class")
case $plan in *"INDEX 4"*) case $plan in *TEMP*) notok index/plan-group "$plan" ;; *) ok index/plan-group ;; esac ;;
*) notok index/plan-group "$plan" ;; esac
# a full scan does visit every row (the counter counts)
check index/scan "$(q 'select count(*) from objects')" \
	"$(visits "select count(*) from objects where memsize >= 0")"

# ---- read-only ----
before=$(sha256sum <"$S")
mt=$(stat -c %Y.%s "$S")
sleep 1
for sql in "insert into objects(address) values (1)" "update objects set memsize = 0" \
	"delete from objects" "create table t(x)" "create temp table t(x)" "drop table objects" \
	"attach '$TMP/x.db' as x" "pragma writable_schema = on" "select load_extension('x')" \
	"create view v as select 1" "begin; commit" "vacuum into '$TMP/v.db'"; do
	name=$(printf '%s' "$sql" | tr -c 'a-z' '-' | cut -c1-20)
	"$H" query "$S" "$sql" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	if [ $rc -ne 0 ] && grep -qE 'not authorized|authorization denied|too many attached|may not be modified' "$TMP/err"; then
		ok "readonly/$name"
	else notok "readonly/$name" "exit $rc: $(head -c 300 "$TMP/err")"; fi
done
check readonly/no-attach-file "" "$(ls "$TMP/x.db" "$TMP/v.db" 2>/dev/null)"
check readonly/bytes "$before" "$(sha256sum <"$S")"
check readonly/mtime "$mt" "$(stat -c %Y.%s "$S")"

# ---- functions: only read-only work on values ----
# fts3_tokenizer() (Debian's SQLite has it) gives a library's address and
# replaces a tokenizer; fts5() gives a pointer; the others are not work
# on values: each refused when prepared, by name
for f in "fts3_tokenizer('simple')" "fts5(null)" "load_extension('x')" \
	"sqlite_compileoption_get(0)" "changes()" "last_insert_rowid()" \
	"sqlite_version()" "random()"; do
	name=${f%%(*}
	"$H" query "$S" "select $f" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	if [ $rc -eq 2 ] && grep -q "not authorized to use function: $name" "$TMP/err"; then
		ok "functions/denied-$name"
	else notok "functions/denied-$name" "exit $rc: $(head -c 300 "$TMP/out" "$TMP/err")"; fi
done
# readfile() and writefile() are the sqlite3 shell's, not the library's;
# the full-text, R*Tree and JSON tables cannot be made or built
for sql in "select readfile('/etc/passwd')" "select writefile('$TMP/w', 'x')" \
	"create virtual table t using fts4(x)" "create virtual table r using rtree(i, a, b)" \
	"select * from json_each('[1,2]')"; do
	name=$(printf '%s' "$sql" | tr -c 'a-z' '-' | cut -c1-24)
	check_rc "functions/refused-$name" 2 "$H" query "$S" "$sql"
done
check functions/no-file "" "$(ls "$TMP/w" 2>/dev/null)"
# the ordinary ones work: aggregates, strings, math, JSON, dates, ours
check functions/aggregates "$(jq -s '[.[] | select(.address)] | "\(length)\t\(map(.memsize // 0) | add)\t1\t1\t1"' -r "$D")" \
	"$(q "select count(*), sum(memsize), avg(memsize) > 0, max(memsize) >= min(memsize), group_concat(type) is not null from objects")"
check functions/scalars "abc	X	bc	x=0007	0x10	16	3	3	2	1970-01-02	1	3	3	bb	x" \
	"$(q "select lower('ABC'), upper('x'), substr('abc', 2), printf('x=%04d', 7), hexaddr(16), addr('0x10'), abs(-3), round(2.5), json_extract('{\"a\":2}', '\$.a'), date(86400, 'unixepoch'), coalesce(null, 1), length('abc'), instr('abc', 'c'), replace('aa', 'a', 'b'), trim(' x ')")"
top=$(q "select hexaddr(address) from objects order by memsize desc limit 1")
check functions/ours "$top	1	1" "$(q "select hexaddr(address), retained(address) >= memsize, length(path(address)) > 0 from objects where address = addr('$top')")"
# an address past 2^64 - 1 is none: NULL, not -1 (strtoull's saturation)
check functions/addr-overflow-hex null "$("$H" query -q -f json "$S" "select addr('0x10000000000000000') as a" | jq -c .a)"
check functions/addr-overflow-dec null "$("$H" query -q -f json "$S" "select addr('18446744073709551616') as a" | jq -c .a)"
check functions/hexaddr-overflow null "$("$H" query -q -f json "$S" "select hexaddr('0x10000000000000000') as a" | jq -c .a)"
check functions/addr-max "0xffffffffffffffff" "$(q "select hexaddr(addr('0xffffffffffffffff'))")"

# ---- formats ----
"$H" query -q -f json "$S" "select address, class, file, line from objects where class = 'String' limit 3" >"$TMP/j"
check format/json-lines 3 "$(jq -c . "$TMP/j" | wc -l | tr -d ' ')"
check format/json-types "number string" "$(jq -r '[(.address | type), (.class | type)] | join(" ")' "$TMP/j" | head -1)"
check format/json-null null "$(q 'select 1' >/dev/null; "$H" query -q -f json "$S" 'select null as x' | jq -c .x)"
check format/tsv "a	b" "$("$H" query -q -f tsv "$S" "select 'a' as a, 'b' as b" | head -1)"
check format/csv 'x,"a,b","say ""hi"""' "$("$H" query -q -f csv "$S" "select 'x' as c, 'a,b', 'say \"hi\"'" | tail -1)"
"$H" query -q "$S" "select 12 as n, 'abc' as longer_name" >"$TMP/t"
check format/text-header "n   longer_name" "$(head -1 "$TMP/t")"
check format/text-rule "--  -----------" "$(sed -n 2p "$TMP/t")"
check format/text-row "12  abc" "$(sed -n 3p "$TMP/t")"

# ---- hostile values: escaped in text, TSV and CSV; JSON escapes ----
printf '%s\n' \
	'{"type":"ROOT","root":"vm","references":["0x1000"]}' \
	'{"address":"0x1000","type":"CLASS","class":"0x2000","name":"Evil\u001b[2J\tX\nY","references":["0x1010"],"memsize":100}' \
	'{"address":"0x1010","type":"STRING","class":"0x1000","bytesize":3,"value":"abc","file":"a\tb\u0007.rb","line":3,"method":"m\u202e","generation":5,"memsize":40}' \
	>"$TMP/evil.json"
for f in text tsv csv; do
	"$H" query -q -f $f "$TMP/evil.json" "select class, file, method from objects where type = 'STRING'; select name from objects" >"$TMP/evil.$f"
	if LC_ALL=C grep -q "$(printf '[\001-\010\013-\037\177]')" "$TMP/evil.$f" ||
		grep -q "$(printf '\342\200\256')" "$TMP/evil.$f"; then
		notok "hostile/$f" "a control byte went out raw: $(od -c "$TMP/evil.$f" | head -5)"
	else ok "hostile/$f"; fi
done
check_grep hostile/escaped 'Evil\\u001b\[2J\\tX\\nY' "$TMP/evil.text"
check hostile/tsv-rows 5 "$(wc -l <"$TMP/evil.tsv" | tr -d ' ')"
"$H" query -q -f json "$TMP/evil.json" "select name from objects where type = 'CLASS'" >"$TMP/evil.json.out"
check hostile/json "$(printf 'Evil\033[2J\tX\nY')" "$(jq -r .name "$TMP/evil.json.out")"
check hostile/class-index 1 "$(q "select count(*) from objects where class = 'Evil' || char(27) || '[2J' || char(9) || 'X' || char(10) || 'Y'" -q "$TMP/evil.json" 2>/dev/null; "$H" query -q -f tsv "$TMP/evil.json" "select count(*) from objects where class = 'Evil' || char(27) || '[2J' || char(9) || 'X' || char(10) || 'Y'" | tail -1)"

# ---- the shell: a pty, a query, the up arrow, .tables, .quit ----
cat >"$TMP/shell.py" <<'EOF'
import os, pty, select, sys, time
hd, store = sys.argv[1], sys.argv[2]
pid, fd = pty.fork()
if pid == 0:
    os.environ["HEAPDUMP_HISTORY"] = sys.argv[3]
    os.execv(hd, [hd, "query", "-q", store])
out = b""
def read(t=3.0, until=None):
    global out
    end = time.time() + t
    while time.time() < end:
        r, _, _ = select.select([fd], [], [], 0.1)
        if r:
            try:
                d = os.read(fd, 65536)
            except OSError:
                return
            if not d:
                return
            out += d
            if until and until in out:
                return
def send(s, until):
    os.write(fd, s)
    read(until=until)
read(until=b"heapdump> ")
send(b"select 40 + 2 as answer;\r", b"heapdump> ")
send(b"\x1b[A\r", b"heapdump> ")
send(b"select count(*)\r", b"...> ")
send(b"from roots;\r", b"heapdump> ")
send(b".tables\r", b"heapdump> ")
send(b".quit\r", None)
read(2.0)
_, status = os.waitpid(pid, 0)
sys.stdout.write(out.decode("utf-8", "replace").replace("\r", ""))
sys.stdout.write("\nstatus %d\n" % os.waitstatus_to_exitcode(status))
EOF
python3 "$TMP/shell.py" "$H" "$S" "$TMP/history" >"$TMP/shell" 2>&1
check shell/answer-twice 2 "$(grep -c '^    42$' "$TMP/shell")"
# the value under the count(*) header and its rule (the line editor may
# redraw a line between them when the machine is slow)
check shell/multi-line "$(q 'select count(*) from roots')" \
	"$(awk '/^count\(\*\) *$/ { h = 1; next } h && /^-+ *$/ { r = 1; next }
		r && NF { print $1; exit }' "$TMP/shell")"
check_grep shell/tables '^objects\(address, type, class' "$TMP/shell"
check_grep shell/quit '^status 0$' "$TMP/shell"
check_grep shell/history-file 'as.040answer;' "$TMP/history"
# standard input that is not a terminal: a script
printf 'select 1 as one;\nselect 2\n as two;\n' | "$H" query -q -f tsv "$S" >"$TMP/script"
check shell/script "one 1 two 2" "$(tr '\n' ' ' <"$TMP/script" | sed 's/ $//')"

# ---- the build: without SQLite's or libedit's pkg-config file, make
# stops and names the Debian package ----
mkdir -p "$TMP/nopc"
PKG_CONFIG_LIBDIR=$TMP/nopc PKG_CONFIG_PATH= make -s -C "$TOP" B="$TMP/b" "$TMP/b/.sql-ok" >"$TMP/mk" 2>&1
rc=$?
if [ $rc -ne 0 ] && grep -q 'install libsqlite3-dev (make deps)' "$TMP/mk"; then ok build/needs-sqlite; else
	notok build/needs-sqlite "exit $rc: $(head -c 300 "$TMP/mk")"; fi
