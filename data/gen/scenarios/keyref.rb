# keyref.rb - a weak-keyed memo that holds its keys: a presenter cache
# keeps, per model, the presenter made for it in an
# ObjectSpace::WeakKeyMap (3.3+), meant to be dropped with the model;
# but each presenter references its model, and the map holds its values
# strongly, so no model ever dies. The models themselves are loaded per
# request and dropped by the code: the map is the only holder.
# Before 3.3 there is no WeakKeyMap: the cache is an ObjectSpace::WeakMap,
# weak in its values too, so that the presenters and their models die
# and nothing leaks (a program that does not leak, on 3.1).
#
#   ruby keyref.rb gem|dump_all OUTDIR      (see harness.rb)
#
# Truth (3.3+): the models and presenters of phase A, with their
# strings, measured as they are made. Holder: the cache (PresenterCache
# @memo: the map itself), which nothing else holds.

require_relative "harness"

WEAK_KEYS = defined?(ObjectSpace::WeakKeyMap) ? true : false

Product = Struct.new(:sku, :title, :description)

class ProductPresenter
  def initialize(product)
    @product = product # the reference back to the key
    @headline = "#{product.title} (#{product.sku})"
    @blurb = product.description[0, 60].upcase
  end

  attr_reader :headline, :blurb
end

class PresenterCache
  def initialize
    @memo = WEAK_KEYS ? ObjectSpace::WeakKeyMap.new : ObjectSpace::WeakMap.new
  end

  def for(product) = (@memo[product] ||= ProductPresenter.new(product))
end

CACHE = PresenterCache.new

$leaked = [0, 0]

def request(id, counting)
  product = Product.new("SKU-%06d" % id, "Widget number #{id}", "A widget made for customer #{id}. " * 4)
  p = CACHE.for(product)
  return unless counting && WEAK_KEYS

  n, bytes = Scenario.measure([product, product.sku, product.title, product.description, p, p.headline, p.blurb])
  $leaked[0] += n
  $leaked[1] += bytes
end

Scenario.phases { |id, counting| request(id, counting) }

Scenario.truth(leaks: WEAK_KEYS, holder_gem: ["@memo"], holder_dump_all: ["PresenterCache"],
               objects: $leaked[0], bytes: $leaked[1],
               note: WEAK_KEYS ? "400 products and presenters of phase A, kept by a WeakKeyMap whose values reference their keys" :
                                 "none: a WeakMap before 3.3, whose presenters and products die")
