# appsingleton.rb - methods piled on one long-lived object: the
# application object (APP, made at boot) gets, per request, a URL helper
# defined on its singleton class (define_singleton_method(:"order_path_
# #{id}") closing over the request's route data and breadcrumbs). The
# growth is in the singleton class's method table, plus what the
# closures hold. (Instance variables set per request on APP as well
# would make APP a second holder beside its singleton class, which the
# dumps do not show it holds: a truth of two holders this harness does
# not express.)
#
#   ruby appsingleton.rb gem|dump_all OUTDIR      (see harness.rb)
#
# Truth: the route data and breadcrumbs of phase A (measured as they are
# made), a Proc each (define_method keeps its own copy of the block, of
# the block's size), plus the IMEMOs (method entries, environments)
# phase A added, and the method names' Strings (their Symbols too on
# 4.0, whose dumps list them among the class's references). Holder:
# APP's singleton class (#<Class:#<App...>>).

require_relative "harness"

class App
  def initialize
    @name = "shop"
  end

  def route(id)
    data = { "controller" => "orders", "id" => id.to_s, "format" => "html-#{id % 3}" }
    crumbs = ["Home", "Orders", "Order #{id} " + "c" * 30]
    block = proc { |q = nil| "/orders/#{data["id"]}.#{data["format"]}#{q ? "?#{q}" : ""} #{crumbs.size}" }
    name = :"order_path_#{id}"
    define_singleton_method(name, &block)
    # the block twice: define_method keeps a copy of it (a Proc of its size)
    [data, *data.values, block, block, crumbs, *crumbs, name.name] # (its Symbol: HIDDEN below)
  end
end

APP = App.new

$leaked = [0, 0]

def request(id, counting)
  owned = APP.route(id)
  APP.public_send(:"order_path_#{id}", "page=2")
  return unless counting

  n, bytes = Scenario.measure(owned)
  $leaked[0] += n
  $leaked[1] += bytes
end

# 4.0's dumps list a class's method names (their dynamic Symbols) among
# its references: the Symbols are then the class's; before, the symbol
# table's alone
HIDDEN = RUBY_VERSION >= "4.0" ? %i[T_IMEMO T_SYMBOL] : %i[T_IMEMO]
imemo = []
Scenario.phases do |id, counting|
  imemo << Scenario.hidden(*HIDDEN) if id == 50 # (phase A's first id: after BEFORE)
  request(id, counting)
  imemo << Scenario.hidden(*HIDDEN) if id == 449 # (its last)
end
grown = Scenario.grown(imemo[0], imemo[1])

Scenario.truth(leaks: true, holder_gem: ["#<Class:#<App"], holder_dump_all: ["#<Class:#<App"],
               objects: $leaked[0] + grown[0], bytes: $leaked[1] + grown[1],
               note: "400 helpers of phase A on APP's singleton class: route Hash, crumbs, strings, Proc, plus the IMEMOs phase A added")
