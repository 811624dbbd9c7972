#!/bin/sh
# tests/ext/quiet.sh - the gem does not change the heap it measures
# (issue 34, item 6): a program that only calls HeapDump.dump three
# times (quiet_prog.rb), traced and not, loads nothing during the calls
# ($LOADED_FEATURES unchanged: no lazy require of json or anything), and
# the three-dump diff of its dumps finds nothing of the gem's or json's
# making new in AFTER and alive in LATER: traced, every retained object
# is the program's own (its file), and untraced the retained objects
# are under 1 KB (137 KB when the sidecar writer required json); traced
# with stacks (stacks) as traced, the dumps carrying them; when the
# program keeps the paths the calls return (kept, traced), the path of
# AFTER is the one object in LATER new in AFTER that is not its own.
SUITE=ext/quiet
. "$(dirname "$0")/lib.sh"

prog=$TOP/tests/ext/quiet_prog.rb
for mode in traced plain kept stacks; do
	d=$TMP/$mode
	mkdir "$d"
	ruby "$prog" "$d" $mode >"$TMP/prog.out" 2>"$TMP/prog.err"
	rc=$?
	if [ $rc -ne 0 ] || ! grep -qx done "$TMP/prog.out"; then
		notok $mode/program "exit $rc: $(tail -c 400 "$TMP/prog.err")"
		continue
	fi
	if grep -q '^loaded ' "$TMP/prog.out"; then
		notok $mode/nothing-loaded "$(grep '^loaded ' "$TMP/prog.out" | head -5 | tr '\n' ' ')"
	else
		ok $mode/nothing-loaded
	fi
	"$HEAPDUMP" diff -q "$d/before.json" "$d/after.json" "$d/later.json" -f json -n 0 >"$TMP/diff.json" 2>"$TMP/err"
	if ! jq -e '.rows' "$TMP/diff.json" >/dev/null 2>&1; then
		notok $mode/diff "no JSON rows: $(head -c 300 "$TMP/err")"
		continue
	fi
	# nothing whose class or site is the gem's or json's
	ours=$(jq -r --arg lib "$TOP/src/lib/" '.rows[] | select((.location | startswith($lib)) or (.location | test("/json(/|\\.rb)")) or (.class | test("^JSON"))) | "\(.count) \(.class) \(.location)"' "$TMP/diff.json")
	# (kept: but the path the program keeps, checked below)
	[ "$mode" = kept ] && ours=$(printf '%s\n' "$ours" | grep -v "^1 String $TOP/src/lib/heapdump.rb:[0-9]*\$" | grep -v '^$' | sed -n 1,1000p)
	[ "$mode" = kept ] && [ "$(jq '[.rows[] | select(.class == "String" and (.location | startswith($lib)))] | length' --arg lib "$TOP/src/lib/" "$TMP/diff.json")" -gt 1 ] &&
		ours="$ours more than the one path: $(jq -c '[.rows[] | select(.location | startswith($lib)) | .location]' --arg lib "$TOP/src/lib/" "$TMP/diff.json")"
	if [ -z "$ours" ]; then ok $mode/none-of-the-gem-or-json; else
		notok $mode/none-of-the-gem-or-json "$(printf '%s' "$ours" | head -5 | tr '\n' ';')"
	fi
	bytes=$(jq -r '.retained.memsize' "$TMP/diff.json")
	if [ "$mode" = traced ] || [ "$mode" = stacks ]; then
		# every object still alive was made by the program itself
		other=$(jq -r --arg p "$prog" '.rows[] | select(.location | startswith($p + ":") | not) | "\(.count) \(.class) \(.location)"' "$TMP/diff.json")
		if [ -z "$other" ]; then ok $mode/only-the-program; else
			notok $mode/only-the-program "$(printf '%s' "$other" | head -5 | tr '\n' ';')"
		fi
	elif [ "$mode" = kept ]; then
		# the program keeps the paths: the one of AFTER is the only
		# object not its own (its bytes too: a frozen copy that the path
		# shares them with, made inside the call, was left out of the
		# dump that made it and found alive in the next, on 3.1)
		other=$(jq -r --arg p "$prog" '.rows[] | select(.location | startswith($p + ":") | not) | "\(.count) \(.class) \(.location)"' "$TMP/diff.json")
		case $other in
		"1 String $TOP/src/lib/heapdump.rb:"*) [ "$(printf '%s\n' "$other" | wc -l)" = 1 ] && ok kept/only-the-path ||
			notok kept/only-the-path "$(printf '%s' "$other" | head -5 | tr '\n' ';')" ;;
		*) notok kept/only-the-path "$(printf '%s' "$other" | head -5 | tr '\n' ';')" ;;
		esac
	elif [ "$bytes" -lt 1024 ] 2>/dev/null; then
		ok plain/under-1kb
	else
		notok plain/under-1kb "$bytes bytes retained: $(jq -c '.rows[:5]' "$TMP/diff.json")"
	fi
	# leaks says the same: under 1 KB
	"$HEAPDUMP" leaks -q "$d/before.json" "$d/after.json" "$d/later.json" -f json >"$TMP/leaks.json" 2>"$TMP/err"
	lb=$(jq -r '.leaked.memsize' "$TMP/leaks.json" 2>/dev/null)
	if [ "$lb" -lt 1024 ] 2>/dev/null; then ok $mode/leaks-under-1kb; else
		notok $mode/leaks-under-1kb "leaked '$lb': $(head -c 300 "$TMP/err")"
	fi
done
exit 0
