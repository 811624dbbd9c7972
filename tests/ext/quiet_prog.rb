# tests/ext/quiet_prog.rb DIR [traced|kept|stacks] - a program that does nothing but
# dump its heap three times (DIR/before.json, after.json, later.json),
# as a leak hunt does (gc: true), with the allocation tracer on when
# "traced". quiet.sh runs heapdump diff and leaks on the dumps: the gem
# must not have made anything that is new in AFTER and alive in LATER
# (issue 34, item 6). Prints the $LOADED_FEATURES each dump added, one
# "loaded FEATURE" a line (none expected), then "done".
dir = ARGV.fetch(0)
require "heapdump"
# "stacks": traced with every allocation's stack (the frames are named
# before each walk: nothing of that may live on either)
HeapDump.trace_allocations_start(stacks: ARGV[1] == "stacks", sample: 1) if %w[traced kept stacks].include?(ARGV[1])
# "kept": the program keeps the paths the calls return (traced too)
kept = ARGV[1] == "kept" ? [] : nil
def dump_to(path, kept)
  r = HeapDump.dump(path, gc: true)
  kept&.push(r)
  nil
end
features = $LOADED_FEATURES.dup
dump_to(File.join(dir, "before.json"), kept)
after_before = $LOADED_FEATURES.dup
dump_to(File.join(dir, "after.json"), kept)
after_after = $LOADED_FEATURES.dup
dump_to(File.join(dir, "later.json"), kept)
after_later = $LOADED_FEATURES.dup
[features, after_before, after_after].zip([after_before, after_after, after_later]).each do |was, now|
  (now - was).each { |f| puts "loaded #{f}" }
end
puts "done"
