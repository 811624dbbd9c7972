# frozen_string_literal: true

# heapdump/minitest - leak assertions for Minitest (man 3 heapdump-ruby,
# LEAK TESTS):
#
#   require "heapdump/minitest"
#
#   def test_no_leak
#     assert_no_leaks(warmup: 3, iterations: 20) { handler.call(request) }
#     assert_allocations(max: 50) { parser.parse("1 + 2") }
#     assert_retained(max_bytes: 1_000) { app.call(env) }
#   end
#
# In this process: the gem's walker dumps the heap (a full GC first) and
# libheapdump judges it (HeapDump::Gate); no `heapdump` program needed.
require "minitest"
require "heapdump/gate"

module HeapDump
  # The assertions, included in Minitest::Test.
  module Assertions
    # Fails when the block leaks by HeapDump::Gate's rule: over the
    # budgets (bytes:, objects:, share:, per_iteration_bytes:, fail_on:
    # [...]; default: a significant leak) on the last three of four dumps
    # and growing at every step. The message names the verdict (the
    # holder's path and share) and the JSON report written under report:
    # (a directory or FILE.json; default $HEAPDUMP_REPORT_DIR or
    # ./tmp/heapdump), with the dumps beside it.
    def assert_no_leaks(warmup: 3, iterations: 20, report: nil, **budgets, &block)
      self.assertions += 1
      where = respond_to?(:name) ? "#{self.class.name}##{name}" : "leak"
      r = HeapDump::Gate.check(warmup: warmup, iterations: iterations, report: report, name: where, **budgets, &block)
      assert !r.leaked?, -> { r.message }
      r
    end

    # Fails when the block allocates more than max objects (every
    # thread's, counted by HeapDump.track); the message lists the sites.
    def assert_allocations(max:, &block)
      self.assertions += 1
      n, sites = HeapDump::Gate.allocations(&block)
      assert n <= max, -> { HeapDump::Gate.allocations_message(n, max, sites) }
      n
    end

    # Fails when what the block leaves alive (two dumps around it, a full
    # GC before each: the leak model's bytes, the VM's tables and what
    # only running code holds left out) is over max_bytes; the message
    # names the holder.
    def assert_retained(max_bytes:, &block)
      self.assertions += 1
      l = HeapDump::Gate.retained(max_bytes, &block)
      assert l.exceeded.empty?, -> { "the block retains too much: #{l.exceeded.map { |b| b[:message] }.join('; ')}" }
      l
    end
  end
end

Minitest::Test.include(HeapDump::Assertions)
