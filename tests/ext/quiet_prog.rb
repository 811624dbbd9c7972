# tests/ext/quiet_prog.rb DIR [traced] - a program that does nothing but
# dump its heap three times (DIR/before.json, after.json, later.json),
# as a leak hunt does (gc: true), with the allocation tracer on when
# "traced". quiet.sh runs heapdump diff and leaks on the dumps: the gem
# must not have made anything that is new in AFTER and alive in LATER
# (issue 34, item 6). Prints the $LOADED_FEATURES each dump added, one
# "loaded FEATURE" a line (none expected), then "done".
dir = ARGV.fetch(0)
require "heapdump"
HeapDump.trace_allocations_start if ARGV[1] == "traced"
features = $LOADED_FEATURES.dup
HeapDump.dump(File.join(dir, "before.json"), gc: true)
after_before = $LOADED_FEATURES.dup
HeapDump.dump(File.join(dir, "after.json"), gc: true)
after_after = $LOADED_FEATURES.dup
HeapDump.dump(File.join(dir, "later.json"), gc: true)
after_later = $LOADED_FEATURES.dup
[features, after_before, after_after].zip([after_before, after_after, after_later]).each do |was, now|
  (now - was).each { |f| puts "loaded #{f}" }
end
puts "done"
