#!/bin/sh
# tests/ext/names.sh - reference names (ref_names) written by the gem, in a
# real Ruby: data/gen/names.rb holds one object through each kind of
# reference (a constant holding a Hash keyed by "user_42", an ivar holding
# an Array, a Thread#[] value, a thread variable, a global, a closure, a
# Struct member, a class with a superclass and an included module);
# names_check.rb asserts each name on the raw dump, ref_names as long as
# references on every record, and that names: true changes no reference
# (the same heap dumped without then with names). heapdump stats --strict
# reads the dumps.
SUITE=ext/names
. "$(dirname "$0")/lib.sh"

mkdir "$TMP/n" "$TMP/p"
if ruby "$TOP/data/gen/names.rb" "$TMP/n" 2>"$TMP/rb.err"; then ok run; else
	notok run "names.rb failed: $(tail -c 600 "$TMP/rb.err")"
fi
if PAIR=1 ruby "$TOP/data/gen/names.rb" "$TMP/p" 2>"$TMP/rb.err"; then ok run-pair; else
	notok run-pair "names.rb PAIR=1 failed: $(tail -c 600 "$TMP/rb.err")"
fi
ruby "$TOP/tests/ext/names_check.rb" "$TMP/n" >"$TMP/out" 2>&1
sed -n 's/^ok \(.*\)/\1/p' "$TMP/out" | while read -r t; do ok "$t"; done
sed -n 's/^not ok \([^:]*\): \(.*\)/\1 \2/p' "$TMP/out" | while read -r t why; do notok "$t" "$why"; done
grep -q '^ok ' "$TMP/out" || notok checker "names_check.rb: $(head -c 400 "$TMP/out")"
# the pair (no names_before.json there: only the pair's checks run)
ruby "$TOP/tests/ext/names_check.rb" "$TMP/p" >"$TMP/pout" 2>&1
for t in pair-plain-has-no-names pair-same-objects pair-same-references pair-same-roots pair-same-fields lengths-named; do
	if grep -q "^ok $t\$" "$TMP/pout"; then ok "$t"; else
		notok "$t" "$(grep "^not ok $t" "$TMP/pout" | head -c 400)$(grep -q "$t" "$TMP/pout" || head -c 300 "$TMP/pout")"
	fi
done

# the dumps read strictly by the library
for f in before later; do
	check_rc "stats-strict-$f" 0 "$HEAPDUMP" stats -q --strict "$TMP/n/names_$f.json"
done
check_rc stats-strict-named 0 "$HEAPDUMP" stats -q --strict "$TMP/p/names_named.json"

# names: takes true or false only; false writes no ref_names
ruby -rheapdump -e 'begin; HeapDump.dump(ARGV[0], names: "yes"); rescue ArgumentError => e; puts e.message; end' "$TMP/x.json" >"$TMP/argerr" 2>&1
check_grep names-option-checked 'names: must be true or false' "$TMP/argerr"
ruby -rheapdump -e 'HeapDump.dump(ARGV[0], names: false)' "$TMP/off.json"
if grep -q '"ref_names"' "$TMP/off.json"; then notok names-false-none "ref_names in a names: false dump"; else ok names-false-none; fi
ruby -rheapdump -e 'HeapDump.dump(ARGV[0])' "$TMP/default.json"
if grep -q '"ref_names"' "$TMP/default.json"; then ok names-default-on; else notok names-default-on "no ref_names in a default dump"; fi
exit 0
