# tests/ext/outputs_test.rb DIR - the outputs of HeapDump.dump: regular
# files are replaced atomically; devices and FIFOs are written in place
# (never replaced: ENOSPC from a full device is an error); symlinks are
# followed (never replaced); a failed dump leaves no sidecar; since: out
# of range is an ArgumentError naming the option.
require_relative "t"
require "heapdump"

dir = ARGV.fetch(0)

# A full device of our own when we may make one (root), else /dev/full:
# a regression must not replace the system's device.
full = File.join(dir, "full-dev")
unless system("mknod", full, "c", "1", "7", err: File::NULL)
  full = "/dev/full"
end
e = check_raises("device/enospc-raises", HeapDump::Error) { HeapDump.dump(full) }
check "device/enospc-message", e && e.message.include?("No space left"), e&.message
check "device/still-a-device", File.chardev?(full), File.lstat(full).ftype
check "device/no-sidecar-beside", !File.exist?("#{full}.hdmeta")
check_eq "device/no-temporary-left", [], Dir.children(File.dirname(full)).select { |n| n.start_with?(".full") }

# a symlink to the full device: followed, the link kept
link = File.join(dir, "to-full")
File.symlink(full, link)
check_raises("symlink-device/enospc-raises", HeapDump::Error) { HeapDump.dump(link) }
check "symlink-device/link-kept", File.symlink?(link)
check "symlink-device/no-sidecar", !File.exist?("#{link}.hdmeta")

# /dev/null: written in place, the path returned, no sidecar
null = File.join(dir, "null-dev")
null = "/dev/null" unless system("mknod", null, "c", "1", "3", err: File::NULL)
check_eq "null/returns-path", null, HeapDump.dump(null)
check "null/still-a-device", File.chardev?(null)

# a FIFO: a reader gets the whole dump through it; the FIFO stays
fifo = File.join(dir, "fifo")
File.mkfifo(fifo)
got = File.join(dir, "from-fifo.json")
reader = spawn("cat", fifo, out: got)
begin
  HeapDump.dump(fifo)
  ok = true
rescue StandardError => err
  ok = err
end
check "fifo/dump-ok", ok == true, ok.inspect
if File.pipe?(fifo)
  Process.wait(reader)
else
  Process.kill("KILL", reader)
  Process.wait(reader)
end
check "fifo/still-a-fifo", File.pipe?(fifo), File.lstat(fifo).ftype
lines = File.exist?(got) ? File.foreach(got).count : 0
check "fifo/reader-got-the-dump", lines > 1000 && File.read(got).end_with?("}\n"), "#{lines} lines"

# a symlink to a regular file: the target gets the dump, the link stays
target = File.join(dir, "target.json")
File.write(target, "old\n")
tlink = File.join(dir, "link.json")
File.symlink("target.json", tlink)
check_eq "symlink-file/returns-path", tlink, HeapDump.dump(tlink)
check "symlink-file/link-kept", File.symlink?(tlink)
check "symlink-file/target-has-dump", File.size(target) > 1000 && File.read(target, 12) != "old\n"
check_eq "symlink-file/target-mode-0600", "600", format("%o", File.stat(target).mode & 0o777)
check "symlink-file/sidecar-beside-name-given", File.exist?("#{tlink}.hdmeta")

# a dangling symlink: the file it names is created
dl = File.join(dir, "dangling.json")
File.symlink("made.json", dl)
HeapDump.dump(dl)
check "symlink-dangling/link-kept", File.symlink?(dl)
check "symlink-dangling/target-made", File.file?(File.join(dir, "made.json"))

# a regular file: replaced (a new inode), never written through
reg = File.join(dir, "reg.json")
File.write(reg, "old\n")
hard = File.join(dir, "hard.json")
File.link(reg, hard)
HeapDump.dump(reg)
check_eq "regular/other-link-untouched", "old\n", File.read(hard)
check "regular/replaced", File.size(reg) > 1000

# issue 14: a failed dump leaves no orphan sidecar
isdir = File.join(dir, "a-directory")
Dir.mkdir(isdir)
File.write(File.join(isdir, "keep"), "x")
check_raises("failed/directory-raises", HeapDump::Error) { HeapDump.dump(isdir) }
check "failed/no-orphan-sidecar", !File.exist?("#{isdir}.hdmeta")
check "failed/directory-untouched", File.directory?(isdir) && File.exist?(File.join(isdir, "keep"))
job = HeapDump.dump(isdir, fork: true)
check_raises("failed/forked-raises", HeapDump::Error) { job.wait }
check "failed/forked-no-orphan-sidecar", !File.exist?("#{isdir}.hdmeta")
check_eq "failed/no-temporary-left", [], Dir.children(dir).select { |n| n.start_with?(".") }

# issue 17: since: out of range
e = check_raises("since/2**64-argument-error", ArgumentError) { HeapDump.dump(File.join(dir, "s.json"), since: 2**64) }
check "since/message-names-option-and-range", e && e.message.include?("since:") && e.message.include?("0..#{2**64 - 1}"), e&.message
check "since/no-bignum-jargon", e && !e.message.include?("bignum"), e&.message
e = check_raises("since/negative-argument-error", ArgumentError) { HeapDump.dump(File.join(dir, "s.json"), since: -1) }
check "since/negative-message", e && e.message.include?("since:") && e.message.include?("0..#{2**64 - 1}"), e&.message
e = check_raises("since/not-a-number", ArgumentError) { HeapDump.dump(File.join(dir, "s.json"), since: "soon") }
check "since/not-a-number-message", e && e.message.include?("since:"), e&.message
check "since/max-accepted", HeapDump.dump(File.join(dir, "s.json"), since: 2**64 - 1) && true
check "since/nothing-left-by-errors", !File.exist?(File.join(dir, "s.json.hdmeta")) || File.exist?(File.join(dir, "s.json"))
