# frozen_string_literal: true

# HeapDump::Console - what `heapdump console DUMP|STORE [MORE...]` runs:
# the inputs loaded (HeapDump.load), then irb with heap, before, after,
# later, heaps and help bound. man 1 heapdump-console.
require "heapdump"

module HeapDump
  module Console
    HELP = <<~TXT
      heapdump console: the heapdump gem's API (src/README.md, man 1 heapdump-console)

      bound:   heap (the last input); before, after (2 inputs), later (3); heaps (all)

      heap.size  heap.ruby_version  heap.info  heap.totals           # counts, facts
      heap.stats(by: [:class, :location], sort: :memsize, all: false) # rows as `heapdump stats`
      heap.top(10)  heap.top_classes(10)                            # largest retained sizes
      heap[0x7f...] / heap["0x7f..."]                               # one object
      heap.select(class: /Plan/, file: "app/models/plan.rb", location: "a.rb:12",
                  generation: 30.., type: :STRING, via: "@cache", name: "Foo",
                  address: [...], from: "leaked.json")             # lazy Enumerable
        sel.count  sel.first(5)  sel.each { |o| ... }  sel.select(...)  sel & other
        sel.stats(by: :location)  sel.explain  sel.write("x.json")  sel.to_gml("x.gml")
        sel.to_dot  sel.render("x.svg")  sel.roots_of  sel.subgraph_of(depth: 2)
      obj.address obj.type obj.class_name obj.name obj.memsize obj.retained obj.site
        obj.generation obj.references obj.referrers obj.reference_names obj["@cache"]
        obj.path obj.dominators
      heap.path(obj)  heap.dominators(obj)                          # HeapDump::Path, #to_s
      heap.roots_of(sel)  heap.subgraph_of(sel, depth: 1)           # selections
      before.diff(after, later)                                     # .added .retained_later .to_h
      before.leaks(after, later)                                    # .suspects .shown .to_h
      later.interface_with(diff_or_sel)                             # .border (keepalive_count,
                                                                    #  retained_count) .holders
    TXT

    # what `help` shows: a local variable of the session on irb 1.4 (the
    # variable wins over irb's help method); on irb 1.13 and later, whose
    # help command runs before any variable is looked at, the command
    # prints it (IrbHelp; `help COMMAND` is still irb's)
    class Help
      def inspect = HELP
      def to_s = HELP
    end

    # irb's help command (irb 1.13+): ours without an argument
    module IrbHelp
      def execute(arg = nil)
        return super unless arg.nil? || arg.to_s.strip.empty?

        puts HELP
      end
    end

    # Loads the inputs and runs irb; returns the exit status.
    def self.start(paths)
      heaps = paths.map { |p| HeapDump.load(p) }
      b = session(heaps)
      $stdout.puts banner(heaps)
      run_irb(b)
      0
    rescue HeapDump::Error => e
      warn "heapdump console: #{e.message}"
      1
    end

    def self.banner(heaps)
      names = case heaps.size
              when 1 then %w[heap]
              when 2 then %w[before after]
              when 3 then %w[before after later]
              else %w[heaps]
              end
      lines = heaps.each_with_index.map do |h, i|
        name = names[i] || "heaps[#{i}]"
        name = "heap" if heaps.size == 1
        "#{name} = #{h.inspect}"
      end
      (lines + ["help: the API"]).join("\n")
    end

    # a binding of the top level (self is main) whose locals are the
    # session's names
    def self.session(heaps)
      b = TOPLEVEL_BINDING.eval("binding")
      before, after, later = heaps.size >= 2 ? heaps : []
      { heap: heaps.last, heaps: heaps, before: before, after: after, later: later,
        help: Help.new }.each { |k, v| b.local_variable_set(k, v) }
      b
    end

    def self.run_irb(b)
      begin
        require "irb"
      rescue LoadError
        raise HeapDump::Error, "#{RbConfig.ruby} has no irb (gem install irb), or give heapdump console --ruby another Ruby"
      end
      IRB::Command::Help.prepend(IrbHelp) if defined?(IRB::Command::Help) && IRB::Command::Help.method_defined?(:execute)
      IRB.setup(nil, argv: [])
      IRB.conf[:IRB_NAME] = "heapdump"
      IRB.conf[:SAVE_HISTORY] = nil unless $stdin.tty? # a script is no history
      ws = IRB::WorkSpace.new(b)
      irb = IRB::Irb.new(ws)
      IRB.conf[:MAIN_CONTEXT] = irb.context
      irb.run(IRB.conf)
    end
  end
end
