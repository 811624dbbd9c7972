# frozen_string_literal: false

# gate_blocks.rb - the blocks of the leak tests (gate.sh): four that leak,
# each through a holder of its own kind, and five that do not but look as
# if they might (warm-up, a memo that saturates, a lazy require, a cache
# at its bound, GC compaction). Shared by gate_test.rb (Minitest) and
# gate_spec.rb (RSpec).

# a class-level cache: a class instance variable that only grows
class GateSessionCache
  @entries = {}
  class << self
    attr_reader :entries

    def remember(k) = (@entries[k] = "session #{k} " * 8)
  end
end

# a closure registry: callbacks that each capture their payload
module GateHooks
  CALLBACKS = []
  def self.on_event(payload) = CALLBACKS << -> { payload.size }
end

# string eval: one method defined per call, its instruction sequence kept
# by the class's method table
class GateTemplates
  @n = 0
  def self.compile
    @n += 1
    class_eval("def render_#{@n}(x) = \"<p>#{'t' * 40}\#{x}</p>\"", __FILE__, __LINE__)
  end
end

module GateBlocks
  @seq = 0
  def self.seq = (@seq += 1)

  LEAKING = {
    "class_cache" => [-> { GateSessionCache.remember(GateBlocks.seq) }, "GateSessionCache"],
    "closure_registry" => [-> { GateHooks.on_event("event #{GateBlocks.seq} " * 10) }, "GateHooks"],
    "thread_local" => [-> { (Thread.current[:gate_log] ||= []) << "line #{GateBlocks.seq} " * 10 }, "Thread"],
    "string_eval" => [-> { GateTemplates.compile }, "GateTemplates"]
  }.freeze

  # warm-up: the first runs build a table that every later run reads
  WARM = {}
  def self.warm
    WARM[:table] ||= (1..300).map { |i| "row #{i}" }
    WARM[:table][seq % 300].size
  end

  # a memo that saturates: 40 keys, the block asks for the next each run
  MEMO = {}
  def self.memo
    k = seq % 40
    MEMO[k] ||= "memo #{k} " * 12
  end

  # a lazy require: the first run loads a library of its own
  def self.lazy
    require_relative "gate_lazy"
    GateLazy.lookup(seq)
  end

  # a cache at its bound: 30 entries, the oldest evicted
  LRU = {}
  def self.bounded
    k = seq
    LRU[k] = "entry #{k} " * 12
    LRU.delete(LRU.first[0]) while LRU.size > 30
  end

  # compaction moves what the block made earlier
  KEEP = Array.new(200) { |i| "kept #{i}" }
  def self.compact
    n = seq
    s = "tmp #{n}" * 4
    GC.compact if (n % 10).zero? && GC.respond_to?(:compact) && GateBlocks.compact?
    s.size
  end

  def self.compact?
    return @compact if defined?(@compact)

    @compact = begin
      GC.compact
      true
    rescue NotImplementedError
      false
    end
  end

  CLEAN = {
    "warm_up" => -> { GateBlocks.warm },
    "saturating_memo" => -> { GateBlocks.memo },
    "lazy_require" => -> { GateBlocks.lazy },
    "bounded_cache" => -> { GateBlocks.bounded },
    "gc_compact" => -> { GateBlocks.compact }
  }.freeze
end
