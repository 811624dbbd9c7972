# tests/ext/t.rb - the checks of the Ruby-side tests: each prints
# "ok - SUITE/name" or "not ok - SUITE/name: why"; the exit status is 1
# when one failed. SUITE comes from the environment.
$t_suite = ENV.fetch("SUITE", "ext")
$t_failed = 0

def check(name, cond, why = "false")
  if cond
    puts "ok - #{$t_suite}/#{name}"
  else
    $t_failed += 1
    puts "not ok - #{$t_suite}/#{name}: #{why.to_s[0, 400]}"
  end
  $stdout.flush
end

def check_eq(name, want, got)
  check(name, want == got, "expected #{want.inspect[0, 200]}, got #{got.inspect[0, 200]}")
end

# A check whose block raises fails, with the exception as the reason.
def check_raises(name, klass)
  yield
  check(name, false, "no #{klass} raised")
  nil
rescue klass => e
  check(name, true)
  e
rescue Exception => e # rubocop:disable Lint/RescueException
  check(name, false, "#{e.class}: #{e.message}")
  nil
end

at_exit { exit(1) if $t_failed > 0 }
