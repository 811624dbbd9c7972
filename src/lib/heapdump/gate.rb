# frozen_string_literal: true

# heapdump/gate - the leak check behind heapdump/minitest and
# heapdump/rspec: a block run in this process, the heap dumped by the
# gem's walker (a full GC first) and judged by libheapdump's leak model
# and budgets, with no `heapdump` program needed (man 3 heapdump-ruby,
# LEAK TESTS).
#
# The rule (HeapDump::Gate.check): the block runs warmup times, then the
# heap is dumped (D0); then three phases of iterations runs, each ended
# by a dump (D1, D2, D3). The block leaks when both hold:
#
# 1. the budgets fail on the leak of D1, D2, D3 (what was new in D2 and
#    is still alive in D3, as `heapdump leaks D1 D2 D3` finds it; default
#    budget "leak.verdict=leak": the verdict's significant leak, 2 KB
#    after the VM's tables, what only running code holds and garbage), and
# 2. the same holder grew at every step: each of the two-dump leaks
#    D1 -> D2 and D2 -> D3 is significant on its own, and names the same
#    holder (path, or cluster shape) as the leak of D1 D2 D3. A two-dump
#    leak passes over a Hash or Array no longer than before: a cache at
#    its bound that replaces entries.
#
# Warm-up, memos that saturate, lazy requires and caches that fill up
# during D0 -> D1 are new in D1 and no longer grow after it. A cache at
# its bound replaces entries without growing (rule 2). GC compaction
# (GC.compact, GC.auto_compact) moves old objects, which the diff takes
# for new ones at their new address, held by whatever held them: a
# different holder at each step (rule 2); and when a compaction ran
# between D0 and D3 (GC.stat(:compact_count) grew), the holder must also
# hold more than half of the leak of D1 D2 D3 and of each step, which the
# objects a compaction moves, scattered over their holders, do not (a
# leak in a block that compacts is missed when what compaction moves
# outweighs it: measured on 3.4.8 and 4.0.1 with 20 KB a phase).
# GC.auto_compact is off during the check (restored after). What
# D0 adds is the growth's fourth point: the verdict names a Hash or Array
# that grows at every one of D0..D3. A leak smaller than the verdict's
# threshold (2 KB) per phase of iterations runs is not seen: more
# iterations see a smaller leak per run.
require "heapdump"
require "fileutils"
require "json"
require "tmpdir"

module HeapDump
  module Gate
    # A failed check: #message names the verdict (suspect 1's path and
    # share), each budget exceeded and where the report went.
    Result = Struct.new(:leaked, :message, :leaks, :steps, :report, :dumps, :seconds, keyword_init: true) do
      def leaked? = leaked
    end

    # the budgets of keyword arguments: bytes: N (leak.bytes>N),
    # objects: N (leak.objects>N), share: PCT (suspect.share>PCT%),
    # per_iteration_bytes: N (leak.bytes > N x iterations), fail_on:
    # ["growth.class[String].objects>10", ...] as given
    def self.budgets(iterations, bytes: nil, objects: nil, share: nil, per_iteration_bytes: nil, fail_on: nil)
      out = []
      out << "leak.bytes>#{Integer(bytes)}" if bytes
      out << "leak.objects>#{Integer(objects)}" if objects
      out << "suspect.share>#{Float(share)}%" if share
      out << "leak.bytes>#{Integer(per_iteration_bytes) * iterations}" if per_iteration_bytes
      out.concat(Array(fail_on).map(&:to_s))
      out << "leak.verdict=leak" if out.empty?
      out
    end

    # Runs the check; a Result. report: a path for the JSON report (written
    # when the block leaks; the dumps are kept beside it), or a directory.
    def self.check(warmup: 3, iterations: 20, report: nil, name: "leak", **budget_args, &block)
      raise ArgumentError, "a block to run" unless block
      raise ArgumentError, "iterations: at least 1" unless iterations.to_i >= 1

      exprs = budgets(iterations, **budget_args)
      t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      dir = Dir.mktmpdir("heapdump-gate")
      dumps = []
      auto = GC.respond_to?(:auto_compact) && GC.auto_compact
      begin
        GC.auto_compact = false if auto
        warmup.to_i.times { block.call }
        compactions = compact_count
        dumps << HeapDump.dump(File.join(dir, "d0.json"), gc: true)
        3.times do |k|
          iterations.times { block.call }
          dumps << HeapDump.dump(File.join(dir, "d#{k + 1}.json"), gc: true)
        end
        result = judge(dumps, exprs, compact_count != compactions)
        result.seconds = Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0
        if result.leaked?
          result.report = write_report(result, report, name, dir)
          result.message = "#{result.message}\n#{report_note(result)}"
        end
        result
      ensure
        GC.auto_compact = true if auto
        FileUtils.rm_rf(dir)
      end
    end

    # What a verdict names: the path (or cluster shape) after "(...): ",
    # up to the note that follows it
    def self.named(leaks)
      leaks.verdict[/\): (.*?)(?:; |\z)/, 1]
    end

    # GC compactions so far (0 where Ruby does not count them)
    def self.compact_count = GC.stat[:compact_count].to_i

    # The share of the leak what the verdict names first holds
    def self.first_share(leaks)
      kind, rank = leaks.first
      return 0.0 unless kind

      kind == :cluster ? leaks.clusters[rank - 1][:share] : leaks.suspects[rank - 1].share
    end

    def self.judge(paths, exprs, compacted = false)
      h = paths.map { |p| HeapDump.load(p, cache: false) }
      leaks = h[1].leaks(h[2], h[3], budgets: exprs)
      over = leaks.exceeded
      steps = [h[1].leaks(h[2]), h[2].leaks(h[3])]
      # the same holder grew at every step: compaction moves old objects,
      # which the diff of untraced dumps takes for new ones, held by
      # whatever held them: a different holder at each step
      grew = steps.all?(&:leak?) && steps.all? { |st| named(st) == named(leaks) }
      # after a compaction the same holders' moved objects may look new
      # at every step, scattered: the holder must hold most of each step
      grew &&= ([leaks] + steps).all? { |x| first_share(x) > 0.5 } if compacted
      leaked = !over.empty? && grew
      msg = if leaked
              "the block leaks: #{leaks.verdict}\n" + over.map { |b| "  #{b[:message]}" }.join("\n")
            elsif !over.empty?
              "no leak: the budgets failed on D1 D2 D3 (#{leaks.verdict}) but the same holder did not grow " \
                "at every step (D1 -> D2: #{steps[0].verdict}; D2 -> D3: #{steps[1].verdict})"
            else
              "no leak: #{leaks.verdict}"
            end
      Result.new(leaked: leaked, message: msg, leaks: leaks, steps: steps, dumps: paths)
    end

    # The report: JSON (the HTML report is `heapdump report`, a program
    # the gem does not hold), and the dumps beside it so that
    # `heapdump report D1 D2 D3 -o x.html` draws the page.
    def self.write_report(result, where, name, dir)
      where ||= ENV["HEAPDUMP_REPORT_DIR"] || File.join(Dir.pwd, "tmp", "heapdump")
      safe = name.to_s.gsub(/[^A-Za-z0-9_.-]+/, "_")[0, 120]
      path = where.end_with?(".json") ? where : File.join(where, "#{safe}.json")
      FileUtils.mkdir_p(File.dirname(path))
      keep = path.sub(/\.json\z/, "")
      FileUtils.mkdir_p(keep)
      dumps = result.dumps.map do |d|
        dest = File.join(keep, File.basename(d))
        FileUtils.mv(d, dest)
        meta = "#{d.sub(/\.json\z/, '')}.hdmeta"
        FileUtils.mv(meta, File.join(keep, File.basename(meta))) if File.exist?(meta)
        dest
      end
      result.dumps = dumps
      l = result.leaks
      doc = { verdict: l.verdict, leak: { count: l.count, memsize: l.memsize },
              budgets: l.budgets, steps: result.steps.map(&:verdict),
              suspects: l.suspects.first(5).map do |s|
                { rank: s.rank, share: s.share, retained_memsize: s.retained_memsize,
                  retained_count: s.retained_count, path: s.path&.to_s }
              end,
              dumps: dumps }
      File.write(path, JSON.pretty_generate(doc) + "\n")
      path
    end

    def self.report_note(result)
      d = result.dumps
      "report: #{result.report} (the page: heapdump report #{d[1]} #{d[2]} #{d[3]} -o leak.html)"
    end
  end
end

module HeapDump
  module Gate
    # [objects the block allocated, {"file:line:Class" => n}] (HeapDump.track)
    def self.allocations(&block)
      sites = HeapDump.track(&block)
      [sites.values.sum, sites]
    end

    def self.allocations_message(n, max, sites)
      top = sites.first(5).map { |s, k| "#{k} #{s}" }.join(", ")
      "the block allocated #{n} objects, #{n - max} over #{max}: #{top}"
    end

    # The leak model of two dumps around one run of the block, with the
    # budget leak.bytes>max_bytes (HeapDump::Leaks#exceeded)
    def self.retained(max_bytes, &block)
      dir = Dir.mktmpdir("heapdump-gate")
      begin
        a = HeapDump.dump(File.join(dir, "before.json"), gc: true)
        block.call
        b = HeapDump.dump(File.join(dir, "after.json"), gc: true)
        HeapDump.load(a, cache: false).leaks(HeapDump.load(b, cache: false),
                                             budgets: ["leak.bytes>#{Integer(max_bytes)}"])
      ensure
        FileUtils.rm_rf(dir)
      end
    end
  end
end
