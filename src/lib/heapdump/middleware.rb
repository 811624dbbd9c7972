# frozen_string_literal: true

# require "heapdump/middleware": HeapDump::Middleware, memprof's Rack
# middleware. Each request runs inside HeapDump's allocation tracking and
# gets one log line with the file:line:Class sites it allocated (or, with
# retained: true, still holds after a full GC); heap dumps every N
# requests or when RSS crosses a threshold; with stacks: true, the
# process traces allocations with their stacks, which those dumps carry.
# See man 3 heapdump-ruby.
# Needs no gem but heapdump: it speaks Rack 2 and Rack 3 without loading
# rack.
#
# Each request runs in track (the _track_* primitives, thread:
# Thread.current) from app.call until the server closes the body: the
# body is wrapped (Body) so that allocations while it is iterated or
# called count, and its close ends the request once. The wrapper has
# each, call, to_ary and to_path exactly when the body has them; to_ary
# closes (Rack 3 SPEC) without closing the inner body twice. One request
# is tracked at a time (a flag under a Mutex, not the Mutex itself: close
# may come from another thread); the tracked one counts only its own
# thread's allocations, so concurrent requests never pollute it. Library
# prefixes (Gem.path, loaded gems, RbConfig's directories, $LOAD_PATH
# entries outside the working directory, library_paths:, <internal:) are
# computed once, when the middleware is made: under Puma the server's own
# sites came first before app_first. Log words with spaces, quotes,
# commas, semicolons or unprintable bytes are quoted, control bytes and
# invalid UTF-8 written \xNN. Tested by tests/ext/middleware.sh under
# WEBrick with Debian's rack 2.2 and webrick 1.8 on every Ruby.
require "heapdump"

module HeapDump
  # call-seq:
  #   HeapDump::Middleware.new(app, top: 20, retained: false, track: true,
  #                            logger: nil, dump_every: nil, dump_rss: nil,
  #                            dump_dir: nil, dump_gzip: false,
  #                            dump_fork: true, dump_gc: true,
  #                            dump_names: true, app_first: true,
  #                            library_paths: [], stacks: false,
  #                            depth: 32, sample: 64)
  #
  # The sites of an entry are the application's first (app_first: true):
  # a site is a library's when its file is under a gem directory
  # (Gem.path, the loaded gems), Ruby's own library directories
  # (RbConfig's rubylibprefix, sitedir, vendordir), a $LOAD_PATH entry
  # outside the working directory (as it was when the middleware was
  # made), one of library_paths (directory prefixes), or <internal:...>;
  # every other site is the application's. Under Puma, Rack and gems
  # allocate more per request than most actions: without it, their sites
  # fill the top of each entry. Within each part, most first.
  #
  # stacks: true starts HeapDump.trace_allocations(stacks: true, depth:,
  # sample:) when the middleware is made, for the life of the process:
  # the objects allocated from then on carry their allocation site, and
  # 1 in sample of them its stack, so that the dumps it writes (and any
  # other dump of the process) have FRAME and STACK lines. A process
  # that already traces with stacks keeps its own depth and sample.
  #
  # One request is tracked at a time: a request that arrives while
  # another is tracked is served untracked and its entry says so. The
  # tracked request counts only the allocations of the thread that
  # called the middleware (from app.call until body.close, so the
  # body's iteration counts), never those of concurrent requests.
  class Middleware
    # A Rack body that runs the middleware's end of request once, on
    # close (or in to_ary, which must close: Rack 3 SPEC). each, call,
    # to_ary and to_path exist exactly when the wrapped body has them.
    class Body
      OWN = %i[each call to_ary to_path].freeze
      private_constant :OWN

      def initialize(body, &on_close)
        @body = body
        @on_close = on_close
        @closed = false
        @body_closed = false
      end

      def each(&block)
        @body.each(&block)
      end

      def call(stream)
        @body.call(stream)
      end

      # The wrapped body's to_ary closes it when it has close (Rack 3
      # SPEC): close then runs only the middleware's end of request.
      def to_ary
        ary = @body.to_ary
        @body_closed = @body.respond_to?(:close)
        ary
      ensure
        close
      end

      def to_path
        @body.to_path
      end

      def close
        return if @closed

        @closed = true
        begin
          @body.close if !@body_closed && @body.respond_to?(:close)
        ensure
          @on_close.call
        end
      end

      def closed?
        @closed
      end

      def respond_to?(name, include_all = false)
        return @body.respond_to?(name, include_all) if OWN.include?(name.to_sym)

        super
      end

      def respond_to_missing?(name, include_all = false)
        name.to_sym != :to_str && @body.respond_to?(name, include_all)
      end

      def method_missing(name, *args, &block)
        return super unless @body.respond_to?(name)

        @body.__send__(name, *args, &block)
      end
      ruby2_keywords(:method_missing)
    end

    OWN_FILES = [__FILE__, HeapDump.method(:track).source_location[0]].map { |f| "#{f}:" }.freeze
    private_constant :OWN_FILES

    attr_reader :top, :retained, :track, :dump_every, :dump_rss, :dump_dir, :dump_gzip, :dump_fork, :dump_gc,
                :dump_names, :app_first, :library_paths, :stacks, :depth, :sample

    # Raises ArgumentError for a value that is not one of those documented.
    def initialize(app, top: 20, retained: false, track: true, logger: nil, dump_every: nil, dump_rss: nil,
                   dump_dir: nil, dump_gzip: false, dump_fork: true, dump_gc: true,
                   dump_names: true, app_first: true, library_paths: [], stacks: false, depth: nil, sample: nil)
      raise ArgumentError, "HeapDump::Middleware: app must respond to call, not #{app.inspect[0, 80]}" unless app.respond_to?(:call)

      @app = app
      @top = count_option(:top, top, 0)
      @retained = flag_option(:retained, retained)
      @track = flag_option(:track, track)
      raise ArgumentError, "retained: true needs track: true" if @retained && !@track

      @logger = logger_option(logger)
      @dump_every = dump_every.nil? ? nil : count_option(:dump_every, dump_every, 1)
      @dump_rss = dump_rss.nil? ? nil : count_option(:dump_rss, dump_rss, 1)
      @dump_dir = dir_option(dump_dir)
      @dump_gzip = flag_option(:dump_gzip, dump_gzip)
      @dump_fork = flag_option(:dump_fork, dump_fork)
      @dump_gc = flag_option(:dump_gc, dump_gc)
      @dump_names = flag_option(:dump_names, dump_names)
      check_dump_options(dump_dir, dump_gzip, dump_fork, dump_gc, dump_names)
      @app_first = flag_option(:app_first, app_first)
      @library_paths = paths_option(library_paths)
      @library = library_prefixes(@library_paths)
      stack_options(stacks, depth, sample)

      @lock = Mutex.new
      @tracking = false  # a request is being tracked
      @requests = 0      # requests finished (body closed or app raised)
      @dump = nil        # the dump in progress or last written: ForkedDump, :writing, or nil
      @rss_armed = true  # RSS was below dump_rss since the last RSS dump
      # last: every option is valid (trace_allocations_start checks these)
      HeapDump.trace_allocations_start(stacks: true, depth: @depth, sample: @sample) if @stacks
    end

    def call(env)
      tracker = claim_tracking
      begin
        status, headers, body = @app.call(env)
      rescue Exception => e # rubocop:disable Lint/RescueException
        finish(env, tracker, nil, e)
        raise
      end
      [status, headers, Body.new(body) { finish(env, tracker, status, nil) }]
    end

    # Requests finished so far (the count dump_every counts).
    def requests
      @lock.synchronize { @requests }
    end

    private

    # :off (track: false), :busy (another request is tracked) or a tracker
    def claim_tracking
      return :off unless @track
      return :busy unless @lock.synchronize { @tracking ? false : (@tracking = true) }

      begin
        HeapDump._track_start(@retained, Thread.current)
      rescue Exception # rubocop:disable Lint/RescueException
        @lock.synchronize { @tracking = false }
        raise
      end
    end

    # The end of a request: counts, dump, one log entry.
    def finish(env, tracker, status, error)
      counts = stop_tracking(tracker)
      dump_note = dump_if_due
      return if tracker == :off && dump_note.nil?

      emit(env, entry(env, status, error, tracker, counts, dump_note))
    end

    def stop_tracking(tracker)
      return nil if tracker.is_a?(Symbol)

      begin
        HeapDump._track_pause(tracker)
        GC.start(full_mark: true, immediate_sweep: true) if @retained
      ensure
        # the hooks point into the tracker: never leave them enabled
        counts = HeapDump._track_finish(tracker)
        @lock.synchronize { @tracking = false }
      end
      counts.reject { |site, _| OWN_FILES.any? { |f| site.start_with?(f) } }
            .sort_by { |site, n| [@app_first && library_site?(site) ? 1 : 0, -n, site] }
    end

    # Counts the request; starts a dump if one is due and none is being
    # written. Returns what the entry says about dumps, or nil.
    def dump_if_due
      why, notes = @lock.synchronize { dump_decision }
      return notes.empty? ? nil : notes.join("; ") unless why

      begin
        d = HeapDump.dump(nil, fork: @dump_fork, gzip: @dump_gzip, dir: @dump_dir, gc: @dump_gc,
                          names: @dump_names)
      rescue StandardError => e
        @lock.synchronize { @dump = nil }
        return (notes << "dump failed (#{why}): #{e.message}").join("; ")
      end
      @lock.synchronize { @dump = @dump_fork ? d : nil }
      path = @dump_fork ? d.path : d
      notes << "dump #{word(path)} (#{why}#{@dump_fork ? ", pid #{d.pid}" : ''})"
      notes.join("; ")
    end

    # Under @lock: [reason or nil, notes]. Claims the dump slot when due.
    def dump_decision
      @requests += 1
      notes = []
      return [nil, notes] unless @dump_every || @dump_rss

      reasons = []
      reasons << "every #{@dump_every} requests" if @dump_every && (@requests % @dump_every).zero?
      rss_due = false
      if @dump_rss
        rss = HeapDump.process_memory["rss"].to_i
        if rss < @dump_rss
          @rss_armed = true
        elsif @rss_armed
          rss_due = true
          reasons << "rss #{rss} >= #{@dump_rss}"
        end
      end
      notes << previous_dump_failure if dump_finished?
      return [nil, notes.compact] if reasons.empty?

      if dump_writing?
        notes << "dump skipped (#{reasons.join(', ')}): #{dump_busy_text}"
        return [nil, notes.compact]
      end
      @rss_armed = false if rss_due
      @dump = :writing
      [reasons.join(", "), notes.compact]
    end

    def dump_writing?
      @dump == :writing || (@dump.is_a?(ForkedDump) && @dump.thread.alive?)
    end

    def dump_finished?
      @dump.is_a?(ForkedDump) && !@dump.thread.alive?
    end

    def dump_busy_text
      return "another dump is being written" if @dump == :writing

      "pid #{@dump.pid} is still writing #{word(@dump.path)}"
    end

    # The last forked dump ended: nil when it succeeded, else a note.
    def previous_dump_failure
      d = @dump
      @dump = nil
      st = d.thread.value
      return nil if st.success? && File.exist?(d.path)

      how = if st.exited? then "exit #{st.exitstatus}"
            elsif st.signaled? then "signal #{Signal.signame(st.termsig)}"
            else st.inspect
            end
      "previous dump #{word(d.path)} failed (pid #{d.pid} #{how})"
    end

    def entry(env, status, error, tracker, counts, dump_note)
      line = +"heapdump: #{word(env['REQUEST_METHOD'])} #{word("#{env['SCRIPT_NAME']}#{env['PATH_INFO']}")} "
      line << (error ? "raised #{word(error.class.name || error.class.inspect)}" : status.to_s)
      case tracker
      when :busy then line << " untracked (another request was being tracked)"
      when :off then nil
      else line << counts_text(counts)
      end
      line << "; #{dump_note}" if dump_note
      line
    end

    def counts_text(counts)
      total = counts.sum { |_, n| n }
      text = +" #{@retained ? 'retained' : 'allocated'} #{total} objects at #{counts.size} sites"
      return text if @top.zero? || counts.empty?

      shown = counts.first(@top)
      text << "; top #{shown.size}: " << shown.map { |site, n| "#{n} #{word(site)}" }.join(", ")
    end

    def emit(env, line)
      if @logger.nil?
        env["rack.errors"].puts(line)
      elsif @logger.respond_to?(:info)
        @logger.info(line)
      else
        @logger.write("#{line}\n")
      end
    end

    # A log token: as is when it is printable and has no space, quote,
    # backslash, comma or semicolon; else in double quotes, with \" \\,
    # control bytes and invalid UTF-8 as \xNN and C1 controls as \uNNNN.
    def word(str)
      s = str.to_s.dup.force_encoding(Encoding::UTF_8)
      return s if s.valid_encoding? && s.match?(/\A[^\x00-\x20\u007f-\u009f\u2028\u2029",;\\]+\z/)

      out = +'"'
      s.each_char do |c|
        if !c.valid_encoding?
          c.each_byte { |b| out << format("\\x%02X", b) }
        elsif c == '"' || c == "\\"
          out << "\\" << c
        elsif c.ord < 0x20 || c.ord == 0x7f
          out << format("\\x%02X", c.ord)
        elsif c.ord.between?(0x80, 0x9f) || c.ord == 0x2028 || c.ord == 0x2029
          out << format("\\u%04X", c.ord)
        else
          out << c
        end
      end
      out << '"'
    end

    def library_site?(site)
      @library.any? { |prefix| site.start_with?(prefix) }
    end

    # The directory prefixes (ending in "/") of the files that are not the
    # application's (see new).
    def library_prefixes(extra)
      dirs = []
      if defined?(Gem)
        dirs.concat(Gem.path.map { |p| File.join(p, "gems") })
        dirs.concat(Gem.loaded_specs.values.map(&:full_gem_path))
      end
      dirs.concat(RbConfig::CONFIG.values_at("rubylibprefix", "rubylibdir", "rubyarchdir", "sitedir", "vendordir")
                                  .compact)
      cwd = File.join(Dir.pwd, "")
      dirs.concat($LOAD_PATH.map { |p| File.expand_path(p.to_s) }.reject { |p| File.join(p, "").start_with?(cwd) })
      dirs.concat(extra)
      dirs.reject(&:empty?).map { |d| File.join(File.expand_path(d), "") }.uniq + ["<internal:"]
    rescue StandardError
      ["<internal:"] + extra.map { |d| File.join(File.expand_path(d), "") }
    end

    # stacks: true with its depth: and sample: (HeapDump.trace's
    # defaults); depth: or sample: without it is a mistake, not a no-op
    def stack_options(stacks, depth, sample)
      @stacks = flag_option(:stacks, stacks)
      unless @stacks
        given = { depth: depth, sample: sample }.reject { |_, v| v.nil? }.keys
        raise ArgumentError, "#{given.join(', ')}: allocation stacks are not asked for (stacks: true)" unless given.empty?

        return
      end
      @depth = depth.nil? ? HeapDump::STACK_DEPTH : depth
      @sample = sample.nil? ? HeapDump::STACK_SAMPLE : sample
      unless @depth.is_a?(Integer) && @depth.between?(1, 256)
        raise ArgumentError, "depth: must be an Integer from 1 to 256, not #{@depth.inspect}"
      end
      return if @sample.is_a?(Integer) && @sample.positive?

      raise ArgumentError, "sample: must be a positive Integer, not #{@sample.inspect}"
    end

    def paths_option(paths)
      list = paths.is_a?(String) ? [paths] : paths
      return list.map { |p| p.respond_to?(:to_path) ? p.to_path : p }.freeze if list.is_a?(Array) &&
                                                                                 list.all? { |p| p.is_a?(String) || p.respond_to?(:to_path) }

      raise ArgumentError, "library_paths: must be an Array of directories, not #{paths.inspect[0, 80]}"
    end

    def count_option(name, value, min)
      return value if value.is_a?(Integer) && value >= min

      raise ArgumentError, "#{name}: must be an Integer >= #{min}, not #{value.inspect}"
    end

    def flag_option(name, value)
      return value if value == true || value == false

      raise ArgumentError, "#{name}: must be true or false, not #{value.inspect}"
    end

    def logger_option(logger)
      return logger if logger.nil? || logger.respond_to?(:info) || logger.respond_to?(:write)

      raise ArgumentError, "logger: must be a Logger (info) or an IO (write), not #{logger.inspect[0, 80]}"
    end

    def dir_option(dir)
      return nil if dir.nil?

      d = dir.respond_to?(:to_path) ? dir.to_path : dir
      raise ArgumentError, "dump_dir: must be a String or a Pathname, not #{dir.inspect}" unless d.is_a?(String)
      raise ArgumentError, "dump_dir: #{d} is not a directory" unless File.directory?(d)

      d
    end

    # dump_* options without a trigger are a mistake, not a no-op; an RSS
    # threshold needs an RSS to compare with.
    def check_dump_options(dir, gzip, fork, gc, names)
      unless @dump_every || @dump_rss
        given = { dump_dir: !dir.nil?, dump_gzip: gzip, dump_fork: !fork, dump_gc: !gc,
                  dump_names: !names }.select { |_, v| v }.keys
        raise ArgumentError, "#{given.join(', ')}: no dump is asked for (dump_every: or dump_rss:)" unless given.empty?
      end
      return unless @dump_rss && HeapDump.process_memory["rss"].nil?

      raise ArgumentError, "dump_rss: this system gives no RSS to compare with (HeapDump.process_memory)"
    end
  end
end
