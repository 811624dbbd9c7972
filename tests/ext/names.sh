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
needs jq jq

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

# the printed paths on the later dump of this Ruby (heapdump path), to
# objects names.rb knows: VERSIONS KEY|ROOT LINE|HOP LINE, VERSIONS a
# comma-separated list of RUBY_VERSION prefixes or "all". The hops of the
# machine stack (conservative, it varies) are left out.
while IFS='|' read -r key root hops; do
	[ -n "$key" ] || continue
	set -- $key
	want=0
	for p in $(echo "$1" | tr , ' '); do
		case $p in all) want=1 ;; *) case $HD_RUBY_VERSION in "$p"*) want=1 ;; esac ;; esac
	done
	[ $want = 1 ] || continue
	a=$(jq -r ".objects.$2" "$TMP/n/names_expected.json" 2>/dev/null)
	"$HEAPDUMP" path -q "$TMP/n/names_later.json" "$a" >"$TMP/path" 2>&1
	check "path-$2" "$root
  $hops" "$(grep -v '^  0x' "$TMP/path")"
done <<'TABLE'
all request_body|root global_tbl $keep|Proc -> IMEMO/env request -> Request @body -> String
all request|root global_tbl $keep|Proc -> IMEMO/env request -> Request
3.1,3.3 inner_local|root vm|Object ::NESTED -> Proc -> IMEMO/env inner_local -> String
3.4,4.0 inner_local|root vm|DATA/VM/pin_array_list -> Object ::NESTED -> Proc -> IMEMO/env inner_local -> String
3.1,3.3 outer_local|root vm|Object ::NESTED -> Proc -> IMEMO/env -> IMEMO/env outer_local -> String
3.4,4.0 outer_local|root vm|DATA/VM/pin_array_list -> Object ::NESTED -> Proc -> IMEMO/env -> IMEMO/env outer_local -> String
3.1,3.3 bound_local|root vm|Object ::BOUND -> Binding -> IMEMO/env bound_local -> String
3.4,4.0 bound_local|root vm|DATA/VM/pin_array_list -> Object ::BOUND -> Binding -> IMEMO/env bound_local -> String
3.1,3.3 admin|root vm|Object ::PriceCalculator -> PriceCalculator ::CACHE -> Hash [:admin] -> String
3.1,3.3 fortytwo|root vm|Object ::PriceCalculator -> PriceCalculator ::CACHE -> Hash [42] -> String
3.1,3.3 entries|root vm|Object ::Registry -> Registry @entries -> Array
3.4 entries|root vm|DATA/VM/pin_array_list -> Object ::Registry -> Registry @entries -> Array
4.0 entries|root vm|DATA/VM/pin_array_list -> Object ::Registry -> Registry -> ivars of Registry @entries -> Array
3.1 request_id|root vm|Ractor -> Thread thread[:request_id] -> String
3.3,3.4,4.0 request_id|root vm|Ractor -> Thread -> Fiber thread[:request_id] -> String
3.1,3.3,3.4 tenant|root vm|Ractor -> Thread -> Hash thread_variable[:tenant] -> String
4.0 tenant|root vm|Ractor -> Thread -> ivars of Thread -> Hash thread_variable[:tenant] -> String
all global|root global_tbl $names_global|String
3.1,3.3 point_x|root vm|Object ::POINT -> Point .x -> String
3.4,4.0 point_x|root vm|DATA/VM/pin_array_list -> Object ::POINT -> Point .x -> String
TABLE

# closures: no method a program redefined is called (a Proc subclass's
# binding, Binding#local_variables redefined): such closures stay
# unnamed, the others are named
cat >"$TMP/hostile.rb" <<'RB'
require "heapdump"
$called = []
class SneakyProc < Proc
  def binding
    $called << :binding
    super
  end
end
def sneaky; sneaky_local = "sneaky local"; SneakyProc.new { sneaky_local }; end
def plain; plain_local = "plain local"; -> { plain_local }; end
$sneaky = sneaky
$plain = plain
HeapDump.dump(ARGV[0], names: true)
if ARGV[1] == "redefine"
  class Binding
    alias_method :hd_orig_local_variables, :local_variables
    def local_variables
      $called << :local_variables
      hd_orig_local_variables
    end
  end
  HeapDump.dump(ARGV[0] + ".2", names: true)
end
puts "called=#{$called.inspect}"
RB
ruby "$TMP/hostile.rb" "$TMP/h.json" redefine >"$TMP/h.out" 2>&1
check closure-no-user-code "called=[]" "$(cat "$TMP/h.out")"
check closure-plain-named 1 "$(grep -c '"ref_names":\["plain_local"' "$TMP/h.json")"
check closure-redefined-proc-unnamed 0 "$(grep -c '"ref_names":\["sneaky_local"' "$TMP/h.json")"
check closure-redefined-binding-unnamed 0 "$(grep -c '"ref_names":\["plain_local"' "$TMP/h.json.2")"

# the dumps read strictly by the library
for f in before later; do
	check_rc "stats-strict-$f" 0 "$HEAPDUMP" stats -q --strict "$TMP/n/names_$f.json"
done
check_rc stats-strict-named 0 "$HEAPDUMP" stats -q --strict "$TMP/p/names_named.json"

# names: takes true or false only; false writes no ref_names
ruby -rheapdump -e 'begin; HeapDump.dump(ARGV[0], names: "yes"); rescue ArgumentError => e; puts e.message; end' "$TMP/x.json" >"$TMP/argerr" 2>&1
check_grep names-option-checked 'names: must be true or false' "$TMP/argerr"
ruby -rheapdump -e 'HeapDump.dump(ARGV[0], names: false)' "$TMP/off.json"
if grep -q '"ref_names":\[' "$TMP/off.json"; then notok names-false-none "ref_names in a names: false dump"; else ok names-false-none; fi
ruby -rheapdump -e 'HeapDump.dump(ARGV[0])' "$TMP/default.json"
if grep -q '"ref_names":\[' "$TMP/default.json"; then ok names-default-on; else notok names-default-on "no ref_names in a default dump"; fi

# the middleware passes dump_names: through (checked like its other options)
cat >"$TMP/mw.rb" <<'RB'
require "heapdump/middleware"
require "stringio"
app = ->(_env) { [200, {}, ["ok"]] }
ARGV.each_slice(2) do |dir, names|
  opts = { dump_every: 1, dump_fork: false, dump_gc: false, dump_dir: dir, track: false }
  opts[:dump_names] = names == "true" unless names == "default"
  mw = HeapDump::Middleware.new(app, **opts)
  _, _, body = mw.call("REQUEST_METHOD" => "GET", "PATH_INFO" => "/", "rack.errors" => StringIO.new)
  body.close
end
begin
  HeapDump::Middleware.new(app, dump_every: 1, dump_names: 1)
rescue ArgumentError => e
  puts e.message
end
begin
  HeapDump::Middleware.new(app, dump_names: false)
rescue ArgumentError => e
  puts e.message
end
RB
mkdir "$TMP/mw-off" "$TMP/mw-on" "$TMP/mw-default"
ruby "$TMP/mw.rb" "$TMP/mw-off" false "$TMP/mw-on" true "$TMP/mw-default" default >"$TMP/mw.out" 2>&1
for d in off on default; do
	f=$(ls "$TMP/mw-$d"/heapdump-*.json 2>/dev/null | head -1)
	if [ -z "$f" ]; then notok "middleware-$d" "no dump: $(head -c 300 "$TMP/mw.out")"; continue; fi
	if grep -q '"ref_names":\[' "$f"; then got=names; else got=none; fi
	case $d in off) want=none ;; *) want=names ;; esac
	check "middleware-$d" "$want" "$got"
done
check_grep middleware-option-checked 'dump_names: must be true or false' "$TMP/mw.out"
check_grep middleware-needs-trigger 'dump_names: no dump is asked for' "$TMP/mw.out"

# closure locals on the first dump as on the second (issue 34, item 7): a
# chain of lambdas, each made in a method with a block parameter (blk) and
# a local after it (prev). #local_variable_get of a block parameter not yet
# a Proc in its slot writes it there, so the env's references changed under
# the preparation: the first dump named blk but not prev, the next both.
cat >"$TMP/chain.rb" <<'RB'
require "heapdump"
class Flusher
  def initialize; @on_flush = nil; end
  def on_flush(&blk)
    prev = @on_flush
    @on_flush = -> { blk.call; prev&.call }
  end
end
FLUSHER = Flusher.new
200.times { |i| FLUSHER.on_flush { i } }
HeapDump.dump(ARGV[0])
HeapDump.dump(ARGV[1])
RB
ruby "$TMP/chain.rb" "$TMP/chain1.json" "$TMP/chain2.json" 2>"$TMP/chain.err" ||
	notok chain/dumps "$(head -c 300 "$TMP/chain.err")"
# the envs of the chain: the 199 that hold a prev (the first holds nil)
envs() { grep '"imemo_type":"env"' "$1" | grep '"blk"' | grep -o '"ref_names":\[[^]]*\]' | sort | uniq -c | sort -rn; }
check chain/first-dump-names-prev 199 "$(grep '"imemo_type":"env"' "$TMP/chain1.json" | grep '"blk"' | grep -c '"prev"')"
check chain/first-as-second "$(envs "$TMP/chain2.json")" "$(envs "$TMP/chain1.json")"

# require "heapdump/signal" and heapdump dump PID: HEAPDUMP_NAMES=0 in the
# process's environment turns names off (the signal carries no option)
cat >"$TMP/srv.rb" <<'RB'
require "heapdump/signal"
$kept = { "user_42" => ["x"] }
File.write(ARGV[0] + ".tmp", Process.pid.to_s)
File.rename(ARGV[0] + ".tmp", ARGV[0])
sleep 60
RB
for n in 0 1; do
	mkdir "$TMP/sig$n"
	HEAPDUMP_NAMES=$n HEAPDUMP_DIR="$TMP/sig$n" ruby "$TMP/srv.rb" "$TMP/ready$n" 2>"$TMP/srv$n.err" &
	srv=$!
	i=0
	while [ ! -f "$TMP/ready$n" ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
	f=$("$HEAPDUMP" dump -q --timeout 60 "$srv" 2>"$TMP/dump$n.err")
	kill "$srv" 2>/dev/null
	wait "$srv" 2>/dev/null
	if [ -z "$f" ] || [ ! -f "$f" ]; then notok "signal-names-$n" "no dump: $(head -c 300 "$TMP/dump$n.err") $(head -c 300 "$TMP/srv$n.err")"; continue; fi
	if grep -q '"ref_names":\[' "$f"; then got=1; else got=0; fi
	check "signal-names-$n" "$n" "$got"
	check_grep "signal-sidecar-$n" "\"ref_names\":$([ $n = 1 ] && echo true || echo false)" "$f.hdmeta"
done
exit 0
