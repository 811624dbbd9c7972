#!/bin/sh
# console.sh - heapdump console: irb driven through standard input, on
# every Ruby of HD_RUBIES (make check's RUBIES) that has irb, with the gem
# built for it (B/ext-VERSION): the answers are the commands' (stats, path,
# leaks); help lists the API; a Ruby without irb, a missing Ruby, a file
# that is not a dump and no input fail with a clear message.
. "$(dirname "$0")/../lib.sh"
needs jq jq

HD=$HEAPDUMP
D=$DATA
cp "$D/ok_ruby3.1_traced.json" "$D/named_ruby3.1_names_after.json.gz" "$TMP/"
for f in before after later; do cp "$D/leak_$f.json" "$TMP/leak_$f.json"; done
HOME=$TMP # irb's history and rc files
XDG_CACHE_HOME=$TMP/cache
export HOME XDG_CACHE_HOME

# The gem of this build for each Ruby: given through RUBYLIB, as the
# program may be another build's (nogvc.sh runs this suite with
# B/nogvc/heapdump); B/heapdump finding it by itself is checked below.
case $B in /*) BDIR=$B ;; *) BDIR=$TOP/$B ;; esac

# the commands' answers
top_class=$("$HD" stats -q -f json --by class "$TMP/ok_ruby3.1_traced.json" | jq -r '.groupings[0].rows[0] | "\(.class) \(.count) \(.memsize)"')
# a request body of the named fixture (its address from the fixture's record)
body=$(jq -r '.objects.body3' "$DATA/named_ruby3.1_names_expected.json")
chain=$("$HD" path "$TMP/named_ruby3.1_names_after.json.gz" "$body" | sed -n '2s/^  //p')
check body-path-known yes "$([ -n "$chain" ] && echo yes)"
suspect=$("$HD" leaks -q -f json "$TMP/leak_before.json" "$TMP/leak_after.json" "$TMP/leak_later.json" |
	jq -r '.suspects[0] | "\(.holder.address) \(.retained_count) \(.retained_memsize)"')

for r in ${HD_RUBIES:-ruby}; do
	v=$("$r" -e 'print RUBY_VERSION' 2>/dev/null) || { notok "ruby[$r]" "does not run"; continue; }
	RUBYLIB="$BDIR/ext-$v:$TOP/src/lib"
	export RUBYLIB
	if ! "$r" -e 'require "irb"' 2>/dev/null; then
		# no irb in this Ruby (4.0 made it a bundled gem): said, exit 1
		echo 'heap.size' | "$HD" console --ruby "$r" "$TMP/ok_ruby3.1_traced.json" >"$TMP/out" 2>"$TMP/err"
		check "no-irb[$v]/exit" 1 $?
		check_grep "no-irb[$v]/says-so" "has no irb \(gem install irb\)" "$TMP/err"
		continue
	fi
	printf '%s\n' 'r = heap.stats(by: :class).first' 'puts "ROW #{r[:class]} #{r[:count]} #{r[:memsize]}"' \
		'puts "SIZE #{heap.size}"' 'help' |
		"$HD" console --ruby "$r" "$TMP/ok_ruby3.1_traced.json" >"$TMP/out" 2>"$TMP/err"
	check "one[$v]/exit" 0 $?
	check "one[$v]/stats-as-the-command" "ROW $top_class" "$(grep '^ROW ' "$TMP/out")"
	check "one[$v]/size" "SIZE 8175" "$(grep '^SIZE ' "$TMP/out")"
	check_grep "one[$v]/banner" "^heap = #<HeapDump::Heap $TMP/ok_ruby3.1_traced.json: 8175 objects" "$TMP/out"
	check_grep "one[$v]/help-lists-the-api" 'heap\.select\(class: /Plan/' "$TMP/out"
	check_grep "one[$v]/help-interface" 'interface_with' "$TMP/out"
	check "one[$v]/store-kept" yes "$([ -f "$TMP/ok_ruby3.1_traced.json.hds" ] && echo yes)"
	printf '%s\n' "puts \"PATH #{heap.path(heap[\"$body\"])}\"" |
		"$HD" console --ruby "$r" "$TMP/named_ruby3.1_names_after.json.gz" >"$TMP/out" 2>"$TMP/err"
	check "path[$v]/as-the-command" "PATH $chain" "$(grep '^PATH ' "$TMP/out")"
	printf '%s\n' 's = before.leaks(after, later).suspects.first' \
		'puts "SUSPECT #{s.holder.hexaddress} #{s.retained_count} #{s.retained_memsize}"' \
		'puts "NAMES #{[before, after, later].map { |h| File.basename(h.source) }.join(",")} #{heap.equal?(later)}"' |
		"$HD" console --ruby "$r" "$TMP/leak_before.json" "$TMP/leak_after.json" "$TMP/leak_later.json" >"$TMP/out" 2>"$TMP/err"
	check "three[$v]/leaks-as-the-command" "SUSPECT $suspect" "$(grep '^SUSPECT ' "$TMP/out")"
	check "three[$v]/bound" "NAMES leak_before.json,leak_after.json,leak_later.json true" "$(grep '^NAMES ' "$TMP/out")"
	check_grep "three[$v]/banner" '^later = #<HeapDump::Heap' "$TMP/out"
done

unset RUBYLIB
# the program of a build tree finds the gem built beside it (B/ext-VERSION,
# src/lib) with the Ruby on PATH
v=$(ruby -e 'print RUBY_VERSION')
if [ -f "$BDIR/ext-$v/heapdump_ext.so" ]; then
	echo 'puts "FOUND #{$LOADED_FEATURES.grep(/heapdump_ext/).first}"' |
		"$BDIR/heapdump" console "$TMP/ok_ruby3.1_traced.json" >"$TMP/out" 2>"$TMP/err"
	check_grep finds-the-build-gem "^FOUND $BDIR/ext-$v/heapdump_ext.so" "$TMP/out"
else
	notok finds-the-build-gem "$BDIR/ext-$v/heapdump_ext.so is missing: make ext"
fi

# errors (the gem of this build through RUBYLIB again: see above)
RUBYLIB="$BDIR/ext-$v:$TOP/src/lib"
export RUBYLIB
printf 'hello\n' >"$TMP/notes.txt"
echo 'heap' | "$HD" console "$TMP/notes.txt" >"$TMP/out" 2>"$TMP/err"
check not-a-dump/exit 1 $?
check_grep not-a-dump/says-so "heapdump console: .*notes.txt.*not a heap dump" "$TMP/err"
check_rc no-input/usage 2 "$HD" console
check_grep no-input/says-so "a dump or store to open" "$TMP/err"
check_rc stdin-input/usage 2 "$HD" console -
check_rc missing-ruby/exit 1 "$HD" console --ruby "$TMP/no/ruby" "$TMP/ok_ruby3.1_traced.json"
check_grep missing-ruby/says-so "cannot run '$TMP/no/ruby': No such file" "$TMP/err"
HEAPDUMP_RUBY=$TMP/no/ruby2 "$HD" console "$TMP/ok_ruby3.1_traced.json" </dev/null >"$TMP/out" 2>"$TMP/err"
check_grep env-ruby/used "cannot run '$TMP/no/ruby2'" "$TMP/err"
check_rc help/exit 0 "$HD" console --help
check_grep help/usage "usage: heapdump console \[options\] DUMP\|STORE \[MORE\.\.\.\]" "$TMP/out"
exit 0
