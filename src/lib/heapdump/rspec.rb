# frozen_string_literal: true

# heapdump/rspec - leak matchers for RSpec (man 3 heapdump-ruby, LEAK
# TESTS):
#
#   require "heapdump/rspec"
#
#   it "does not leak" do
#     expect { handler.call(request) }.not_to leak_memory
#     expect { handler.call(request) }.not_to leak_memory(iterations: 50, bytes: 10_000)
#     expect { parser.parse("1 + 2") }.to allocate_at_most(50).objects
#     expect { app.call(env) }.to retain_at_most(1_000).bytes
#   end
#
# The same rule as heapdump/minitest (HeapDump::Gate), in this process.
require "rspec/expectations"
require "heapdump/gate"

module HeapDump
  # The matchers, included in every example group.
  module Matchers
    # expect { }.not_to leak_memory(warmup: 3, iterations: 20, **budgets)
    class LeakMemory
      def initialize(opts)
        @opts = opts
      end

      def supports_block_expectations? = true

      def matches?(block)
        name = ::RSpec.respond_to?(:current_example) && ::RSpec.current_example ? ::RSpec.current_example.full_description : "leak"
        @result = HeapDump::Gate.check(name: name, **@opts, &block)
        @result.leaked?
      end

      def does_not_match?(block) = !matches?(block)

      def failure_message_when_negated = @result.message
      def failure_message = "expected the block to leak, but #{@result.message}"
      def description = "leak memory"
    end

    # expect { }.to allocate_at_most(N).objects
    class AllocateAtMost
      def initialize(max)
        @max = Integer(max)
      end

      def objects = self
      def supports_block_expectations? = true

      def matches?(block)
        @n, @sites = HeapDump::Gate.allocations(&block)
        @n <= @max
      end

      def failure_message = HeapDump::Gate.allocations_message(@n, @max, @sites)
      def failure_message_when_negated = "expected more than #{@max} objects allocated, got #{@n}"
      def description = "allocate at most #{@max} objects"
    end

    # expect { }.to retain_at_most(N).bytes
    class RetainAtMost
      def initialize(max)
        @max = Integer(max)
      end

      def bytes = self
      def supports_block_expectations? = true

      def matches?(block)
        @leaks = HeapDump::Gate.retained(@max, &block)
        @leaks.exceeded.empty?
      end

      def failure_message = "the block retains too much: #{@leaks.exceeded.map { |b| b[:message] }.join('; ')}"
      def failure_message_when_negated = "expected more than #{@max} bytes retained: #{@leaks.verdict}"
      def description = "retain at most #{@max} bytes"
    end

    def leak_memory(**opts) = LeakMemory.new(opts)
    def allocate_at_most(max) = AllocateAtMost.new(max)
    def retain_at_most(max) = RetainAtMost.new(max)
  end
end

::RSpec.configure { |c| c.include(HeapDump::Matchers) } if defined?(::RSpec) && ::RSpec.respond_to?(:configure)
