# fiberstorage.rb - a request store in fiber storage: a RequestStore-like
# helper keeps per-request values in Fiber[:request_store] (Ruby 3.2's
# inheritable fiber storage; Thread.current[:request_store], fiber-local,
# on 3.1), a Hash keyed by request id, to be cleared by a middleware
# that the app never installed. The server runs every request on its
# main thread: the store of the main fiber grows.
#
#   ruby fiberstorage.rb gem|dump_all OUTDIR      (see harness.rb)
#
# Truth: the values stored in phase A (the current user Hash and the
# request's locale and trace strings), measured as they are made.
# Holder: the main Thread or its Fiber (the storage is the fiber's).

require_relative "harness"

module RequestStore
  STORAGE = Fiber.respond_to?(:[]) ? true : false

  def self.store
    if STORAGE
      Fiber[:request_store] ||= {}
    else
      Thread.current[:request_store] ||= {}
    end
  end

  def self.clear! = store.clear # (the middleware that calls it is not installed)
end

$leaked = [0, 0]

def request(id, counting)
  values = { "user" => { "id" => id, "name" => "user #{id}", "email" => "user#{id}@example.com" },
             "locale" => "en-#{id % 5}", "trace" => "trace-%016x" % (id * 0x9e3779b9) }
  RequestStore.store[id] = values
  return unless counting

  user = values["user"]
  n, bytes = Scenario.measure([values, user, user["name"], user["email"], values["locale"], values["trace"]])
  $leaked[0] += n
  $leaked[1] += bytes
end

Scenario.phases { |id, counting| request(id, counting) }

Scenario.truth(leaks: true, holder_gem: ["Fiber", "Thread"], holder_dump_all: ["Fiber", "Thread"],
               objects: $leaked[0], bytes: $leaked[1],
               note: "400 request stores of phase A (Hash, user Hash, strings) in the main fiber's storage")
