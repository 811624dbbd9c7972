# frozen_string_literal: true

# gate_test.rb - heapdump/minitest on gate_blocks.rb (gate.sh): each
# leaking block fails assert_no_leaks with a message naming its holder;
# each clean block passes GATE_RUNS times (default 5); assert_allocations
# and assert_retained. Prints "time NAME SECONDS" for each check.
require "heapdump/minitest"
require "minitest/autorun"
require_relative "gate_blocks"

RUNS = Integer(ENV.fetch("GATE_RUNS", "5"))
REPORTS = ENV.fetch("GATE_REPORTS")

class GateTest < Minitest::Test
  i_suck_and_my_tests_are_order_dependent!

  GateBlocks::LEAKING.each do |name, (block, holder)|
    define_method("test_leaks_#{name}") do
      t = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      e = assert_raises(Minitest::Assertion) do
        assert_no_leaks(report: File.join(REPORTS, "#{name}.json"), &block)
      end
      $stdout.puts "time #{name} #{Process.clock_gettime(Process::CLOCK_MONOTONIC) - t}"
      $stdout.puts "message #{name} #{e.message.lines.first.strip}"
      assert_match(/\Athe block leaks: .*#{Regexp.escape(holder)}/, e.message)
      assert_match(/\d+\.\d% of the leak/, e.message)
      assert_path_exists File.join(REPORTS, "#{name}.json")
      assert_path_exists File.join(REPORTS, name, "d3.json")
    end
  end

  GateBlocks::CLEAN.each do |name, block|
    define_method("test_clean_#{name}") do
      failures = 0
      RUNS.times do |k|
        t = Process.clock_gettime(Process::CLOCK_MONOTONIC)
        begin
          assert_no_leaks(report: File.join(REPORTS, "#{name}-#{k}.json"), &block)
        rescue Minitest::Assertion => e
          failures += 1
          $stdout.puts "false-failure #{name} #{e.message.lines.first.strip}"
        end
        $stdout.puts "time #{name} #{Process.clock_gettime(Process::CLOCK_MONOTONIC) - t}"
      end
      $stdout.puts "clean #{name} #{RUNS - failures}/#{RUNS}"
      assert_equal 0, failures
    end
  end

  def test_allocations
    assert_allocations(max: 20) { Array.new(5) { |i| "s#{i}" } }
    e = assert_raises(Minitest::Assertion) { assert_allocations(max: 10) { Array.new(50) { Object.new } } }
    assert_match(/allocated 5\d objects, 4\d over 10: 50 .*gate_test\.rb:\d+:Object/, e.message)
  end

  KEPT = []
  def test_retained
    assert_retained(max_bytes: 2_000) { Array.new(100) { |i| "t#{i}" * 10 } }
    e = assert_raises(Minitest::Assertion) { assert_retained(max_bytes: 2_000) { 100.times { |i| KEPT << "k#{i}" * 10 } } }
    assert_match(/retains too much: budget leak\.bytes>2000 exceeded: .*GateTest ::KEPT/, e.message)
  end
end
