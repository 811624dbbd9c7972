# retry.rb - issue 34, item 2 (memory held by several holders at once):
# a small job runner whose RetrySet keeps an entry for every failed
# attempt, and never drops those already retried. A job fails twice
# before it succeeds, so each payload is shared by two entries: no entry
# alone keeps it alive, the retry set (its @entries Array) does.
#
#   ruby retry.rb gem|dump_all OUTDIR      (see harness.rb)
#
# Truth: the entries of phase A (two a failing job), their error
# messages and backtraces, and the payloads they share (the Hash, its
# args Array and strings), measured as they are made. Holder: RetrySet
# @entries.

require_relative "harness"

class RetrySet
  Entry = Struct.new(:payload, :attempt, :error_class, :error_message, :backtrace, :retry_at)

  def initialize
    @entries = [] # sorted by retry_at; retried entries are never removed (the bug)
    @done = 0
  end

  def schedule(payload, attempt, error)
    entry = Entry.new(payload, attempt, error.class.name, error.message, error.backtrace.first(2),
                      attempt * 15)
    @entries << entry
    entry
  end

  def due(now) = @entries.select { |e| e.retry_at <= now && e.attempt == now / 15 }
end

class FlakyMailer
  def perform(args)
    raise IOError, "SMTP timeout after 5s delivering #{args[1]}" if args[2] < 2
    "sent #{args[0]}"
  end
end

class Runner
  def initialize(retries)
    @retries = retries
    @workers = { "FlakyMailer" => FlakyMailer.new }
  end

  # Runs a job, retrying it until it succeeds; yields each retry entry.
  def run(payload)
    attempt = 0
    begin
      @workers.fetch(payload["class"]).perform(payload["args"] + [attempt])
    rescue IOError => e
      attempt += 1
      entry = @retries.schedule(payload, attempt, e)
      yield entry if block_given?
      retry
    end
  end
end

RETRIES = RetrySet.new
RUNNER = Runner.new(RETRIES)

$leaked = [0, 0]

def enqueue(id, counting)
  payload = { "class" => "FlakyMailer", "jid" => "%024x" % (id * 0x9e3779b97f4a7c15 % 2**96),
              "queue" => "mailers", "args" => [id, "customer#{id}@example.com"],
              "body" => "Dear customer #{id},\n" + "Your invoice is attached. " * 12,
              "enqueued_at" => 1_700_000_000.5 + id }
  owned = []
  RUNNER.run(payload) do |entry|
    owned.concat([entry, entry.error_message, entry.backtrace, *entry.backtrace]) if counting
  end
  return unless counting
  owned.concat([payload, payload["args"], *payload["args"].grep(String), *payload.values.grep(String)])
  n, bytes = Scenario.measure(owned)
  $leaked[0] += n
  $leaked[1] += bytes
end

Scenario.phases(warm: 40) { |id, counting| enqueue(id, counting) }

Scenario.truth(leaks: true, holder_gem: ["@entries"], holder_dump_all: ["RetrySet"],
               objects: $leaked[0], bytes: $leaked[1],
               note: "400 payloads of phase A, each shared by its two retry entries (with their messages and backtraces)")
