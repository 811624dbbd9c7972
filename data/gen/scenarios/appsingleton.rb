# appsingleton.rb - methods and instance variables piled on one
# long-lived object: the application object (APP, made at boot) gets,
# per request, a URL helper defined on its singleton class
# (define_singleton_method(:"order_path_#{id}") closing over the
# request's route data) and the request's rendered breadcrumbs in an
# instance variable of its own (instance_variable_set(:"@crumbs_#{id}")).
# The growth is in the singleton class's method table and in APP's own
# fields, plus what the closures and the variables hold.
#
#   ruby appsingleton.rb gem|dump_all OUTDIR      (see harness.rb)
#
# Truth: the route data and breadcrumbs of phase A (measured as they are
# made), a Proc each (define_method keeps its own copy of the block, of
# the block's size), plus the IMEMOs (method entries, environments)
# phase A added. Holder: APP's singleton class or APP (class App).

require_relative "harness"

class App
  def initialize
    @name = "shop"
  end

  def route(id)
    data = { "controller" => "orders", "id" => id.to_s, "format" => "html-#{id % 3}" }
    block = proc { |q = nil| "/orders/#{data["id"]}.#{data["format"]}#{q ? "?#{q}" : ""}" }
    define_singleton_method(:"order_path_#{id}", &block)
    crumbs = ["Home", "Orders", "Order #{id} " + "c" * 30]
    instance_variable_set(:"@crumbs_#{id}", crumbs)
    [data, *data.values, block, crumbs, *crumbs]
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

imemo = []
Scenario.phases do |id, counting|
  imemo << Scenario.hidden(:T_IMEMO) if id == 50 # (phase A's first id: after BEFORE)
  request(id, counting)
  imemo << Scenario.hidden(:T_IMEMO) if id == 449 # (its last)
end
grown = Scenario.grown(imemo[0], imemo[1])

Scenario.truth(leaks: true, holder_gem: ["App"], holder_dump_all: ["App"],
               objects: $leaked[0] + grown[0], bytes: $leaked[1] + grown[1],
               note: "400 helpers and breadcrumbs of phase A on APP: route Hash, strings, Proc, crumbs, plus the IMEMOs phase A added")
