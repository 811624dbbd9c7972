# registry.rb - issue 34, item 13: a Customer class keeps every customer
# in a class variable, @@registry, a Hash keyed by id; each customer
# keeps every order it was given in its @orders Array, and nothing ever
# archives them. The 400 customers exist before BEFORE; phase A gives
# them orders: 400 holders (the @orders Arrays) whose paths differ only
# by the registry's key, Customer @@registry -> Hash [id] -> Customer
# @orders -> Array: one shape.
#
#   ruby registry.rb gem|dump_all OUTDIR      (see harness.rb)
#
# Truth: the orders of phase A, their line items and strings, measured
# as they are made. Holder: @@registry (the cluster of the 400 @orders).

require_relative "harness"

class Order
  attr_reader :number, :lines

  def initialize(number, customer_id, lines)
    @number = number
    @reference = "ORD-#{customer_id}-#{number.to_s.rjust(6, "0")}"
    @lines = lines
    @status = :placed
    @note = "deliver to door #{customer_id % 40}, ring twice; leave with the neighbour if out. " * 4
  end

  def owned = [self, @reference, @lines, *@lines, *@lines.map(&:sku), @note]
end

LineItem = Struct.new(:sku, :quantity, :cents)

class Customer
  @@registry = {}

  def self.find_or_create(id)
    @@registry[id] ||= new(id)
  end

  attr_reader :id

  def initialize(id)
    @id = id
    @name = "Customer #{id}"
    @orders = []
  end

  def place_order(number)
    lines = Array.new(2) { |i| LineItem.new("SKU-#{(number * 7 + i) % 1000}", i + 1, 999 * (i + 1)) }
    order = Order.new(number, @id, lines)
    @orders << order # the leak: orders are never archived
    order
  end
end

$leaked = [0, 0]

def checkout(number, counting)
  customer = Customer.find_or_create(number % 400)
  order = customer.place_order(number)
  return unless counting
  n, bytes = Scenario.measure(order.owned)
  $leaked[0] += n
  $leaked[1] += bytes
end

(0...400).each { |id| Customer.find_or_create(id) }
(0...800).each { |n| checkout(n, false) } # warm-up: two orders each, the Arrays at their size
Scenario.dump("before")
(800...1200).each { |n| checkout(n, true) } # phase A: one order each
Scenario.dump("after")
(1200...1600).each { |n| checkout(n, false) }
Scenario.dump("later")

Scenario.truth(leaks: true, holder_gem: ["@@registry"], holder_dump_all: ["Customer -> Hash"],
               objects: $leaked[0], bytes: $leaked[1],
               note: "400 orders of phase A, one per customer, with their line items and strings")
