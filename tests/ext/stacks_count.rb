# tests/ext/stacks_count.rb DUMP - an independent count of a dump's objects
# by allocation stack and by frame, from its JSON lines alone (the STACK
# and FRAME lines, each object's "stack"), for stacks.sh to compare with
# heapdump's: one JSON object {"stacks": {KEY => [count, memsize]},
# "frames": {KEY => [count, memsize]}}, a frame's KEY "label|file|line",
# a stack's its frames' keys joined by " > ", outermost first. Every
# object counts (heapdump runs with --all).
require "json"
frames = {}
stacks = {}
objs = []
File.foreach(ARGV.fetch(0)) do |line|
  r = JSON.parse(line)
  case r["type"]
  when "FRAME"
    frames[r["id"]] = [r["label"] || "#{r["class"]}##{r["method"]}", r["file"], r["line"]].join("|")
  when "STACK"
    stacks[r["id"]] = r["frames"]
  when "ROOT", "SHAPE"
  else
    objs << [r["stack"], r["memsize"] || 0] if r["stack"]
  end
end
by_stack = Hash.new { |h, k| h[k] = [0, 0] }
by_frame = Hash.new { |h, k| h[k] = [0, 0] }
objs.each do |sid, mem|
  fids = stacks.fetch(sid)
  key = fids.map { |f| frames.fetch(f) }.join(" > ")
  by_stack[key][0] += 1
  by_stack[key][1] += mem
  fids.uniq.each do |f|
    by_frame[frames[f]][0] += 1
    by_frame[frames[f]][1] += mem
  end
end
puts JSON.generate("stacks" => by_stack, "frames" => by_frame)
