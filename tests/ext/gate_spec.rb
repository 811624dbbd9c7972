# frozen_string_literal: true

# gate_spec.rb - heapdump/rspec on gate_blocks.rb (gate.sh): the matchers
# on one leaking block of each kind, the clean ones once each.
require "heapdump/rspec"
require_relative "gate_blocks"

REPORTS = ENV.fetch("GATE_REPORTS")

RSpec.describe "heapdump/rspec" do
  GateBlocks::LEAKING.each do |name, (block, holder)|
    it "fails on #{name}, naming #{holder}" do
      expect { expect(&block).not_to leak_memory(report: File.join(REPORTS, "spec-#{name}.json")) }
        .to raise_error(RSpec::Expectations::ExpectationNotMetError, /\Athe block leaks: .*#{Regexp.escape(holder)}.*\d\.\d% of the leak/m)
    end
  end

  GateBlocks::CLEAN.each do |name, block|
    it "passes #{name}" do
      expect(&block).not_to leak_memory(report: File.join(REPORTS, "spec-#{name}.json"))
    end
  end

  it "counts allocations" do
    expect { Array.new(5) { |i| "s#{i}" } }.to allocate_at_most(20).objects
    expect { expect { Array.new(50) { Object.new } }.to allocate_at_most(10).objects }
      .to raise_error(RSpec::Expectations::ExpectationNotMetError, /allocated 5\d objects/)
  end

  it "bounds what a block retains" do
    kept = []
    expect { Array.new(100) { |i| "t#{i}" * 10 } }.to retain_at_most(2_000).bytes
    expect { expect { 100.times { |i| kept << "k#{i}" * 10 } }.to retain_at_most(2_000).bytes }
      .to raise_error(RSpec::Expectations::ExpectationNotMetError, /retains too much: budget leak\.bytes>2000 exceeded/)
  end
end
