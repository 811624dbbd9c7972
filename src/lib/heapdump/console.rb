# frozen_string_literal: true

# HeapDump::Console - what `heapdump console DUMP|STORE [MORE...]` runs:
# the inputs loaded (HeapDump.load), then irb with heap, before, after,
# later, heaps and help bound; where irb cannot be required (4.0 made it a
# bundled gem), a basic prompt of its own (Console::Basic), said once on
# stderr. man 1 heapdump-console.
#
# Console::Basic: Reline or gets, more lines while Ruby's parser says the
# expression is cut short (Prism's errors at the end of input on 3.4+,
# parse.y's "unexpected end-of-input" before), => value.inspect,
# exceptions printed, help, exit/quit/end of input. HEAPDUMP_CONSOLE=basic
# runs it everywhere (tests/cli/console.sh runs one session on irb and on
# it, on every Ruby).
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
        skip_weak: true on path, dominators, roots_of, top, leaks   # as --skip-weak
      before.diff(after, later)                                     # .added .retained_later .to_h
      before.leaks(after, later)                                    # .suspects .shown .to_h
        newest first: HeapDump::OrderError (force: true: compared as given)
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

    # Loads the inputs and runs irb (or, where irb cannot be required,
    # the basic prompt: Basic); returns the exit status. HEAPDUMP_CONSOLE
    # =basic runs the basic prompt even where irb is, =irb insists on irb.
    def self.start(paths)
      heaps = paths.map { |p| HeapDump.load(p) }
      b = session(heaps)
      $stdout.puts banner(heaps)
      case ENV["HEAPDUMP_CONSOLE"].to_s
      when "basic" then Basic.new(b).run
      when "irb" then run_irb(b)
      else irb? ? run_irb(b) : basic_instead(b)
      end
      0
    rescue HeapDump::Error => e
      warn "heapdump console: #{e.message}"
      1
    end

    # irb can be required (4.0 made it a bundled gem, not always installed)
    def self.irb?
      require "irb"
      true
    rescue LoadError
      false
    end

    def self.basic_instead(b)
      warn "heapdump console: irb was not found for #{RbConfig.ruby} (gem install irb for the full console): " \
           "this is the basic prompt (help, exit)"
      Basic.new(b).run
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
        raise HeapDump::Error, "#{RbConfig.ruby} has no irb (gem install irb), or give heapdump console --ruby another Ruby " \
                               "(HEAPDUMP_CONSOLE=irb insists on irb; without it the basic prompt runs)"
      end
      IRB::Command::Help.prepend(IrbHelp) if defined?(IRB::Command::Help) && IRB::Command::Help.method_defined?(:execute)
      IRB.setup(nil, argv: [])
      IRB.conf[:IRB_NAME] = "heapdump"
      IRB.conf[:SAVE_HISTORY] = nil unless $stdin.tty? # a script is no history
      # irb truncates an assignment's echo to the terminal's width, which
      # it asks standard output for: a pipe has none, and irb 1.4 (Debian's
      # 3.1) dies there with ENOTTY. Output that is no terminal gets the
      # value whole.
      IRB.conf[:ECHO_ON_ASSIGNMENT] = true unless $stdout.tty?
      ws = IRB::WorkSpace.new(b)
      irb = IRB::Irb.new(ws)
      IRB.conf[:MAIN_CONTEXT] = irb.context
      irb.run(IRB.conf)
    end

    # The basic prompt, when irb is not there: a line read with Reline
    # when it is there and standard input is a terminal, else with gets;
    # more lines while the input is an incomplete expression (Basic.
    # incomplete?); evaluated in the session's one binding; "=> " and the
    # value's inspect; an exception printed, and the next line read.
    # exit, quit or end of input leave; help prints the API.
    class Basic
      def initialize(binding, input: $stdin, output: $stdout)
        @binding = binding
        @in = input
        @out = output
        @line = 1
        @reline = input.tty? && reline
      end

      def run
        buf = +""
        while (line = read(buf.empty? ? "heapdump> " : "heapdump* "))
          if buf.empty?
            word = line.strip
            next if word.empty?
            break if %w[exit quit exit! quit!].include?(word)
            next @out.puts(HELP) if word == "help"
          end
          buf << line.chomp << "\n"
          next if Basic.incomplete?(buf)

          evaluate(buf)
          buf = +""
        end
        evaluate(buf) unless buf.strip.empty? # end of input inside an expression: its error
        @out.puts if @in.tty?
      end

      # src is an expression cut short (more lines may complete it), by
      # the parser of this Ruby: Prism's errors at the end of the input
      # (3.4 and later), parse.y's "unexpected end-of-input" (3.3 and
      # earlier)
      def self.incomplete?(src)
        prism? ? prism_incomplete?(src) : parse_y_incomplete?(src)
      end

      def self.prism?
        return @prism unless @prism.nil?

        @prism = RUBY_VERSION >= "3.4" && begin
          require "prism"
          Prism.respond_to?(:parse)
        rescue LoadError
          false
        end
      end

      # errors that more input cannot mend: a token where none goes
      FINAL = %i[unexpected_token_ignore expect_eol_after_statement].freeze

      def self.prism_incomplete?(src)
        errs = Prism.parse(src).errors
        return false if errs.empty? || errs.any? { |e| FINAL.include?(e.type) }

        size = src.rstrip.bytesize
        errs.any? { |e| e.location.start_offset >= size || e.type.to_s.match?(/_term|_eof|close_context/) }
      end

      def self.parse_y_incomplete?(src)
        RubyVM::InstructionSequence.compile(src)
        false
      rescue SyntaxError => e
        e.message.match?(/unexpected end-of-input|unexpected \$end|meets end of file|anywhere before EOF/)
      end

      private

      def reline
        require "reline"
        true
      rescue LoadError
        false
      end

      def read(prompt)
        return Reline.readline(prompt, true) if @reline

        if @in.tty?
          @out.print prompt
          @out.flush
        end
        @in.gets
      end

      def evaluate(src)
        first = @line
        @line += src.count("\n")
        value = @binding.eval(src, "(heapdump)", first)
        @out.puts "=> #{value.inspect}"
      rescue SystemExit
        raise
      rescue Interrupt
        @out.puts "Interrupt"
      rescue Exception => e # rubocop:disable Lint/RescueException: a session survives what it runs
        where = e.backtrace&.find { |l| l.start_with?("(heapdump):") }
        @out.puts "#{where ? "#{where}: " : ''}#{e.message} (#{e.class})"
      ensure
        @out.flush
      end
    end
  end
end
