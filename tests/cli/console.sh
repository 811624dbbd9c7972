#!/bin/sh
# console.sh - heapdump console driven through standard input, on every
# Ruby of HD_RUBIES (make check's RUBIES), with the gem built for it
# (B/ext-VERSION): irb where the Ruby has it, and the basic prompt
# (HEAPDUMP_CONSOLE=basic, and what runs where irb cannot be required, as
# on 4.0.1) on every one; the answers are the commands' (stats, path,
# leaks, the refusal of dumps given newest first); help lists the API; a
# missing Ruby, a file that is not a dump and no input fail with a clear
# message.
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

# the CLI's refusal of dumps given newest first, as the console prints it
order_err=$("$HD" leaks -q "$TMP/leak_after.json" "$TMP/leak_before.json" 2>&1 | sed 's/^heapdump: //')

# One session, the same on every Ruby and every prompt: irb where the Ruby
# has it, and the basic prompt (HEAPDUMP_CONSOLE=basic) everywhere, which
# is what runs where irb cannot be required (4.0.1 here: irb is a bundled
# gem there, not installed).
session() { # TAG RUBY: the checks of one prompt
	tag=$1 r=$2
	printf '%s\n' 'r = heap.stats(by: :class).first' 'puts "ROW #{r[:class]} #{r[:count]} #{r[:memsize]}"' \
		'puts "SIZE #{heap.size}"' 'help' |
		"$HD" console --ruby "$r" "$TMP/ok_ruby3.1_traced.json" >"$TMP/out" 2>"$TMP/err"
	check "one[$tag]/exit" 0 $?
	# an assignment's echo with standard output a pipe: irb 1.4 (3.1) died
	# asking the pipe its width (ENOTTY, "Maybe IRB bug!")
	check "one[$tag]/no-error" "" "$(grep -h -E 'Inappropriate ioctl|ENOTTY|IRB bug|Errno::' "$TMP/out" "$TMP/err" | head -2)"
	check "one[$tag]/stats-as-the-command" "ROW $top_class" "$(grep '^ROW ' "$TMP/out")"
	check "one[$tag]/size" "SIZE 8175" "$(grep '^SIZE ' "$TMP/out")"
	check_grep "one[$tag]/banner" "^heap = #<HeapDump::Heap $TMP/ok_ruby3.1_traced.json: 8175 objects" "$TMP/out"
	check_grep "one[$tag]/help-lists-the-api" 'heap\.select\(class: /Plan/' "$TMP/out"
	check_grep "one[$tag]/help-interface" 'interface_with' "$TMP/out"
	check "one[$tag]/store-kept" yes "$([ -f "$TMP/ok_ruby3.1_traced.json.hds" ] && echo yes)"
	printf '%s\n' "puts \"PATH #{heap.path(heap[\"$body\"])}\"" |
		"$HD" console --ruby "$r" "$TMP/named_ruby3.1_names_after.json.gz" >"$TMP/out" 2>"$TMP/err"
	check "path[$tag]/as-the-command" "PATH $chain" "$(grep '^PATH ' "$TMP/out")"
	printf '%s\n' 's = before.leaks(after, later).suspects.first' \
		'puts "SUSPECT #{s.holder.hexaddress} #{s.retained_count} #{s.retained_memsize}"' \
		'puts "NAMES #{[before, after, later].map { |h| File.basename(h.source) }.join(",")} #{heap.equal?(later)}"' \
		'begin; after.leaks(before); rescue HeapDump::OrderError => e; puts "ORDER #{e.message}"; end' |
		"$HD" console --ruby "$r" "$TMP/leak_before.json" "$TMP/leak_after.json" "$TMP/leak_later.json" >"$TMP/out" 2>"$TMP/err"
	check "three[$tag]/leaks-as-the-command" "SUSPECT $suspect" "$(grep '^SUSPECT ' "$TMP/out")"
	check "three[$tag]/bound" "NAMES leak_before.json,leak_after.json,leak_later.json true" "$(grep '^NAMES ' "$TMP/out")"
	check_grep "three[$tag]/banner" '^later = #<HeapDump::Heap' "$TMP/out"
	check "three[$tag]/order-as-the-command" "ORDER $order_err" "$(grep '^ORDER ' "$TMP/out")"
}

# What only the basic prompt does: an expression over several lines, an
# exception printed and the session going on, exit.
basic() { # TAG RUBY
	tag=$1 r=$2
	printf '%s\n' 'x = heap.stats(by: :class,' '  sort: :count).first' 'def twice(n)' '  n * 2' 'end' \
		'puts "TWICE #{twice(x[:count])}"' 'no_such_name' '1 +* 2' 'puts "STR #{"a' 'b".size}"' \
		'puts "STILL #{heap.size}"' 'heap.select(class: "NoSuchClass").roots_of' 'puts "IRB #{defined?(IRB::Irb).inspect}"' \
		'exit' 'puts "NOT REACHED"' |
		"$HD" console --ruby "$r" "$TMP/ok_ruby3.1_traced.json" >"$TMP/out" 2>"$TMP/err"
	check "basic[$tag]/exit" 0 $?
	check "basic[$tag]/multi-line" "TWICE $(( $(echo "$top_class" | cut -d' ' -f2) * 2 ))" "$(grep '^TWICE ' "$TMP/out")"
	check_grep "basic[$tag]/value-printed" '^=> \{:?class' "$TMP/out"
	check_grep "basic[$tag]/name-error-printed" "no_such_name.*\(NameError\)" "$TMP/out"
	check_grep "basic[$tag]/syntax-error-printed" "\(SyntaxError\)" "$TMP/out"
	check "basic[$tag]/string-over-lines" "STR 3" "$(grep '^STR ' "$TMP/out")"
	check "basic[$tag]/goes-on" "STILL 8175" "$(grep '^STILL ' "$TMP/out")"
	check_grep "basic[$tag]/empty-selection-error" "the selection picks no object.*\(HeapDump::Error\)" "$TMP/out"
	check "basic[$tag]/exit-leaves" "" "$(grep 'NOT REACHED' "$TMP/out")"
	check "basic[$tag]/not-irb" "IRB nil" "$(grep '^IRB ' "$TMP/out")"
	printf 'puts "EOF #{heap.size}"\n' | "$HD" console --ruby "$r" "$TMP/ok_ruby3.1_traced.json" >"$TMP/out" 2>"$TMP/err"
	check "basic[$tag]/eof-leaves" "0 EOF 8175" "$? $(grep '^EOF ' "$TMP/out")"
}

for r in ${HD_RUBIES:-ruby}; do
	v=$("$r" -e 'print RUBY_VERSION' 2>/dev/null) || { notok "ruby[$r]" "does not run"; continue; }
	RUBYLIB="$BDIR/ext-$v:$TOP/src/lib"
	export RUBYLIB
	if "$r" -e 'require "irb"' 2>/dev/null; then
		unset HEAPDUMP_CONSOLE
		session "$v" "$r"
		check "irb[$v]/no-basic-note" "" "$(grep 'basic prompt' "$TMP/err")"
		HEAPDUMP_CONSOLE=basic
		export HEAPDUMP_CONSOLE
		session "$v/basic" "$r"
		basic "$v/basic" "$r"
		unset HEAPDUMP_CONSOLE
	else
		# no irb in this Ruby (4.0 made it a bundled gem): the basic
		# prompt, said once on stderr
		unset HEAPDUMP_CONSOLE
		session "$v/no-irb" "$r"
		check "no-irb[$v]/says-so" "heapdump console: irb was not found for $("$r" -e 'print RbConfig.ruby') (gem install irb for the full console): this is the basic prompt (help, exit)" "$(cat "$TMP/err")"
		basic "$v/no-irb" "$r"
		# HEAPDUMP_CONSOLE=irb insists on irb: exit 1, said
		echo 'heap.size' | HEAPDUMP_CONSOLE=irb "$HD" console --ruby "$r" "$TMP/ok_ruby3.1_traced.json" >"$TMP/out" 2>"$TMP/err"
		check "no-irb[$v]/irb-insisted-exit" 1 $?
		check_grep "no-irb[$v]/irb-insisted-says-so" "has no irb \(gem install irb\)" "$TMP/err"
	fi
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
