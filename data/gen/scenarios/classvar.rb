# classvar.rb - a class-variable memo in a mixin: a Cacheable module,
# included into many model classes, memoizes computed attributes in
# @@memo, a Hash keyed by [class name, record id, attribute]. Class
# variables of a module are shared by every class that includes it: one
# Hash for all, and nothing ever expires. Each request loads a record of
# one of eight classes and asks it for its computed attributes.
#
#   ruby classvar.rb gem|dump_all OUTDIR      (see harness.rb)
#
# Truth: the memo's entries of phase A (the key Array with its Strings,
# the value String), measured as they are made. Holder: the module
# Cacheable's class variable @@memo.

require_relative "harness"

module Cacheable
  @@memo = {}

  def cached(attr)
    key = [self.class.name, id, attr]
    hit = @@memo.key?(key)
    value = (@@memo[key] ||= yield)
    hit ? nil : [@@memo.assoc(key)[0], value]
  end
end

MODELS = %w[Order Invoice Customer Product Shipment Refund Coupon Review].map do |name|
  Class.new do
    include Cacheable
    attr_reader :id

    def initialize(id) = @id = id
    def summary = cached(:summary) { "#{self.class.name} ##{id}: " + "detail " * 12 }
    def slug = cached(:slug) { "#{self.class.name.downcase}-#{id}-#{(id * 7919) % 10_007}" }
  end.tap { |c| Object.const_set(name, c) }
end

$leaked = [0, 0]

def request(id, counting)
  record = MODELS[id % MODELS.size].new(id)
  made = [record.summary, record.slug].compact
  return unless counting

  owned = made.flat_map { |key, value| [key, value] } # (key[0] is the class's own name)
  n, bytes = Scenario.measure(owned)
  $leaked[0] += n
  $leaked[1] += bytes
end

Scenario.phases { |id, counting| request(id, counting) }

Scenario.truth(leaks: true, holder_gem: ["@@memo"], holder_dump_all: ["Cacheable"],
               objects: $leaked[0], bytes: $leaked[1],
               note: "800 memo entries of phase A: the key Array, the value String (the class names are the classes')")
