# singleton.rb - issue 34, item 11: a registry of requests, each given a
# singleton class of its own (define_singleton_method for its current
# user, extend with a Traceable module). The user is held only by the
# singleton method's block, the method only by the singleton class, and
# the singleton class only by its one instance: the request's link to its
# class is what keeps them alive.
#
#   ruby singleton.rb gem|dump_all OUTDIR      (see harness.rb)
#
# Truth: the requests of phase A, their strings, singleton classes,
# the singleton methods' lambdas (and define_method's copies), users and the users' strings, measured
# as they are made, with the DATA a singleton class references (4.0's
# VM/cc_table), plus what phase A added to the hidden objects
# (IMEMO: method entries, environments; ICLASS: the extended module's in
# each singleton class), measured after a full GC. Holder:
# RequestRegistry @requests.

require_relative "harness"

module Traceable
  def trace_id = "#{self.class.superclass}-#{object_id}"
end

User = Struct.new(:id, :email, :roles)

class Request
  attr_reader :path, :headers

  def initialize(id)
    @path = "/api/v1/accounts/#{id}/invoices"
    @headers = { "Authorization" => "Bearer #{"t#{id}" * 10}", "Accept" => "application/json" }
  end

  def owned = [self, @path, @headers, *@headers.values, singleton_class]
end

class RequestRegistry
  def initialize
    @requests = []
  end

  def track(request) = @requests << request
  def size = @requests.size
end

REQUESTS = RequestRegistry.new

$leaked = [0, 0]

def handle(id, counting)
  user = User.new(id, "user#{id}@example.com", ["reader", "billing #{id % 3}"])
  request = Request.new(id)
  finder = -> { user }
  request.define_singleton_method(:current_user, &finder)
  request.extend(Traceable)
  REQUESTS.track(request) # the leak: requests are never untracked
  size = request.current_user.email.size
  if counting # after the call: the singleton class has its method cache
    # finder twice: define_method keeps a copy of it (a Proc of the same size)
    n, bytes = Scenario.measure(request.owned + [finder, finder, user, user.email, user.roles, *user.roles])
    # 4.0: the singleton class's call cache table is a DATA of its own
    # (asked there only: ObjectSpace.reachable_objects_from leaves call
    # caches behind, which 3.1 to 3.4 would not have otherwise)
    cc_n, cc_bytes = RUBY_VERSION >= "4.0" ? Scenario.internal(request.singleton_class, :T_DATA) : [0, 0]
    $leaked[0] += n + cc_n
    $leaked[1] += bytes + cc_bytes
  end
  size
end

HIDDEN = %i[T_IMEMO T_ICLASS].freeze
(0...30).each { |id| handle(id, false) }
Scenario.dump("before")
hidden0 = Scenario.hidden(*HIDDEN)
(30...330).each { |id| handle(id, true) }
hidden1 = Scenario.hidden(*HIDDEN)
Scenario.dump("after")
(330...630).each { |id| handle(id, false) }
Scenario.dump("later")

hidden = Scenario.grown(hidden0, hidden1)
Scenario.truth(leaks: true, holder_gem: ["@requests"], holder_dump_all: ["RequestRegistry"],
               objects: $leaked[0] + hidden[0], bytes: $leaked[1] + hidden[1],
               note: "300 requests of phase A with their singleton classes, lambdas and users, plus the IMEMO and ICLASS phase A added")
