# frozen_string_literal: true

# The heapdump gem: ObjectSpace.dump_all-compatible heap dumps written in
# C from inside the process, plus fork and signal dumping, allocation
# tracing, object counts and memprof-style allocation tracking.
# See man 3 heapdump-ruby, and src/README.md in the heapdump repository.
require "heapdump_ext"
require "heapdump/version"

module HeapDump
  # A dump being written by a forked child (HeapDump.dump(fork: true)).
  ForkedDump = Struct.new(:pid, :path, :thread) do
    # Waits for the child; returns the path, or raises HeapDump::Error.
    def wait
      status = thread.value
      return path if status.success? && File.exist?(path)

      raise Error, "heapdump: the child #{pid} writing #{path} failed (#{status.inspect})"
    end
  end

  # The totals of a dump_all output, counted as it streams by: the
  # sidecar's objects, roots, dump_memsize and dump_bytes.
  class StreamTotals # :nodoc:
    attr_reader :objects, :roots, :memsize, :bytes

    def initialize
      @rest = "".b
      @objects = @roots = @memsize = @bytes = 0
    end

    def add(chunk)
      @bytes += chunk.bytesize
      @rest << chunk
      cut = @rest.rindex("\n") or return
      lines = @rest.byteslice(0, cut + 1)
      @rest = @rest.byteslice(cut + 1, @rest.bytesize)
      count(lines)
    end

    def finish
      count(@rest) unless @rest.empty?
      @rest = "".b
    end

    private

    def count(lines)
      roots = 0
      lines.scan(/^\{"type":"ROOT".*$/) { |l| roots += 1; @roots += l.scan('"0x').size }
      shapes = lines.scan(/^\{[^\n]*?"type":"SHAPE"/).size
      @objects += lines.count("\n") + (lines.end_with?("\n") ? 0 : 1) - roots - shapes
      lines.scan(/"memsize":(\d+)/) { @memsize += Regexp.last_match(1).to_i }
    end
  end
  private_constant :StreamTotals

  # The mean gap between the allocations whose stack is taken
  # (trace_allocations(stacks: true)): measured, tests/bench/README.md.
  STACK_SAMPLE = 64
  STACK_DEPTH = 32

  class << self
    # call-seq:
    #   HeapDump.dump(path = nil, fork: false, gzip: false, full: false,
    #                 since: nil, dir: nil, gc: false, shapes: false,
    #                 names: true) -> path or ForkedDump
    #
    # Writes the heap as ObjectSpace.dump_all NDJSON to path (mode 0600,
    # written to a temporary file and renamed), with PATH.hdmeta, the
    # sidecar, beside it. Without a path:
    # DIR/heapdump-PID-TIME-USEC-RANDOM.json[.gz] (RANDOM: 16 hex digits).
    # fork: true writes from a forked child and returns a ForkedDump at
    # once. since: N keeps the traced objects of GC generation >= N.
    # gc: true runs a full GC first (in this process, before any fork),
    # so that the dump holds what is alive rather than what is not
    # collected yet. shapes: true (or a shape id N: those from N on)
    # writes the SHAPE records after the roots, as dump_all(shapes:) on
    # Ruby 3.2 and later; the default is none. names: true (the default)
    # writes each record's reference names, "ref_names" (man 5
    # heapdump-dump): a field every JSON reader ignores, about 8% more
    # bytes; names: false leaves it out. The dump_all fallback writes no
    # names. The sidecar's "ref_names" says whether the dump has them.
    def dump(path = nil, fork: false, gzip: false, full: false, since: nil, dir: nil, gc: false, shapes: false,
             names: true)
      given = path
      path = path ? File.expand_path(path.respond_to?(:to_path) ? path.to_path : path.to_s) : default_path(dir, gzip)
      # frozen now: File.exist? and File.lstat would otherwise make a
      # frozen copy that the path shares its bytes with (Ruby 3.1), made
      # in the quiet window, left out of this dump, and alive in the next
      # whenever the caller keeps the path
      path.freeze
      # what this call allocates from here is left out of the dump (the
      # path, which it returns, is not)
      quiet = NATIVE_WALK
      _quiet_end if quiet # the call the ensure makes after the walk, made before it (its call cache)
      _quiet_begin if quiet
      begin
        since = generation_option(since) unless since.nil?
        shapes = shapes_option(shapes)
        names = flag_option(:names, names)
        GC.start(full_mark: true, immediate_sweep: true) if gc
        meta = process_meta
        meta["dumper"] = dumper
        meta["ref_names"] = names && meta["dumper"] == "heapdump"
        # a name of ours (no path given) is never followed if a link is
        # there: another user of a shared directory may have planted it
        opts = { gzip: gzip, full: full, since: since, shapes: shapes, names: names, follow: !given.nil? }.freeze
        # asked before the walk: its call cache is in this dump, not new
        # in the next (tests/ext/quiet.sh)
        tracked = _malloc_active?
        unless fork
          written = write_dump(path, opts, meta)
          malloc_beside(path) if tracked
          return written
        end

        forked = fork_dump(path, opts, meta)
        _malloc_snapshot("#{path}.malloc.ndjson", "dump", false) if tracked
        forked
      ensure
        _quiet_end if quiet
      end
    end

    # call-seq:
    #   HeapDump.native_walk? -> true or false
    #
    # Whether dump walks the heap in C (the Rubies the walker knows), or
    # writes it with ObjectSpace.dump_all (any other Ruby, or
    # HEAPDUMP_FALLBACK=1 in the environment).
    def native_walk?
      NATIVE_WALK && ENV["HEAPDUMP_FALLBACK"] != "1" && self_check.nil?
    end


    # Which writes the next dump: "heapdump" (the C walk) or "dump_all"
    # (no walk for this Ruby, HEAPDUMP_FALLBACK=1, or
    # ObjectSpace.trace_object_allocations on while our tracer is off:
    # only dump_all can write objspace's allocation sites). Says once on
    # stderr why it is dump_all.
    def dumper
      why = if !native_walk?
              if ENV["HEAPDUMP_FALLBACK"] == "1" then "HEAPDUMP_FALLBACK=1"
              elsif NATIVE_WALK then self_check
              else NO_WALK_REASON
              end
            elsif objspace_tracing?
              "ObjectSpace.trace_object_allocations is on and HeapDump.trace_allocations is not"
            end
      return "heapdump" unless why

      note_fallback(why)
      "dump_all"
    end

    # call-seq:
    #   HeapDump.sidecar_paths(dump) -> [path, ...]
    #
    # Where the sidecar of a dump may be: DUMP.hdmeta, the name the gem
    # writes (globs of dumps, *.json and *.json.gz, miss it), then
    # DUMP.meta.json, as older gems named it.
    def sidecar_paths(dump)
      ["#{dump}.hdmeta", "#{dump}.meta.json"]
    end

    # The directory of dumps without a path: dir, else $HEAPDUMP_DIR,
    # else $TMPDIR, else /tmp (heapdump dump PID looks in the same place).
    def dump_dir(dir = nil)
      [dir, ENV["HEAPDUMP_DIR"], ENV["TMPDIR"]].each do |d|
        return d.to_s unless d.nil? || d.to_s.empty?
      end
      "/tmp"
    end

    # call-seq:
    #   HeapDump.on_signal(signal = "URG", dir: nil, gzip: false, full: false,
    #                      gc: true, names: true) -> true
    #
    # On the signal, a forked child writes DIR/heapdump-PID-TIME.json and
    # the process goes on (after a full GC unless gc: false). The trap
    # only queues the request; a thread of ours forks. Completion is the rename to the final name.
    # names: as HeapDump.dump's (require "heapdump/signal": false when
    # HEAPDUMP_NAMES=0 in the environment).
    def on_signal(signal = "URG", dir: nil, gzip: false, full: false, gc: true, names: true)
      name = signal.is_a?(Integer) ? Signal.signame(signal) : signal.to_s.sub(/\ASIG/, "")
      names = flag_option(:names, names)
      (@signal_opts ||= {})[name] = { dir: dir, gzip: gzip, full: full, gc: gc, names: names }.freeze
      signal_worker
      Signal.trap(name) { HeapDump.__send__(:signal_request, name) }
      true
    end

    # call-seq:
    #   HeapDump.trace_allocations(stacks: false, depth: 32, sample: 64) { ... } -> block's value
    #   HeapDump.trace(...) { ... }
    #
    # Records file, line, method and generation (GC.count) of the objects
    # allocated in the block; dumps then carry them. stacks: true also
    # records the Ruby call stack (its depth innermost frames) of 1 in
    # sample allocations on average (sample: 1, every one); dumps carry
    # it as "stack" and their STACK and FRAME lines (man 5 heapdump-dump).
    def trace_allocations(stacks: false, depth: STACK_DEPTH, sample: STACK_SAMPLE)
      trace_allocations_start(stacks: stacks, depth: depth, sample: sample)
      begin
        yield
      ensure
        trace_allocations_stop
      end
    end

    alias trace trace_allocations

    # Without the native walk, dump_all writes the dump: it knows only
    # ObjectSpace's allocation tracing, so that is started too.
    def trace_allocations_start(stacks: false, depth: STACK_DEPTH, sample: STACK_SAMPLE)
      stack_options(depth, sample) if stacks
      _trace_start(stacks ? true : false, depth, sample)
      return if native_walk?

      require "objspace"
      ObjectSpace.trace_object_allocations_start
      @objspace_traces = (@objspace_traces || 0) + 1
    end

    def stack_options(depth, sample)
      raise ArgumentError, "depth: must be an Integer from 1 to 256, not #{depth.inspect}" unless depth.is_a?(Integer) && depth.between?(1, 256)
      raise ArgumentError, "sample: must be a positive Integer, not #{sample.inspect}" unless sample.is_a?(Integer) && sample.positive?
    end
    private :stack_options

    def trace_allocations_stop
      _trace_stop
      return unless @objspace_traces&.positive?

      @objspace_traces -= 1
      ObjectSpace.trace_object_allocations_stop
    end

    # call-seq:
    #   HeapDump.count_objects(*namespaces) -> Hash
    #
    # {"total" => slots, "free" => free slots, "types" => {"T_STRING" => n},
    #  "classes" => {"Foo::Bar" => n}, "namespaces" => {"Foo" => n}}.
    # With namespaces, "classes" keeps only the classes inside them.
    def count_objects(*namespaces)
      raise NotImplementedError, "heapdump: this Ruby does not export the heap iterator count_objects needs" unless respond_to?(:_count_objects, true)

      _count_objects(namespaces.flatten.map { |n| n.is_a?(Module) ? n.name.to_s : n.to_s })
    end

    # call-seq:
    #   HeapDump.track(retained: false, thread: nil) { ... } -> {"file:line:Class" => count}
    #   HeapDump.track(stacks: true, depth: 32, sample: 1, retained: false, thread: nil) { ... }
    #     -> {"sites" => {"file:line:Class" => count},
    #         "stacks" => {[[file, line, label], ...] => count}}
    #
    # Counts the objects allocated in the block by allocation site and
    # class, most first. retained: true counts only those still alive
    # after a full GC. thread: counts only the allocations of that
    # thread (default: every thread's, as they happen during the block).
    # stacks: true counts them by allocation stack too: each key the
    # stack's depth innermost frames, outermost first, each frame
    # [file, line, label] as allocation_stack gives them (file nil for a
    # C method), frozen; most first. With sample: N > 1 the stacks count
    # only the sampled allocations, about 1 in N ("sites" counts every
    # one); the default, 1, takes every allocation's stack.
    def track(retained: false, thread: nil, stacks: false, depth: nil, sample: nil)
      raise ArgumentError, "thread: must be a Thread or nil, not #{thread.inspect}" unless thread.nil? || thread.is_a?(Thread)

      stacks = flag_option(:stacks, stacks)
      if stacks
        depth ||= STACK_DEPTH
        sample ||= 1
        stack_options(depth, sample)
      elsif !depth.nil? || !sample.nil?
        raise ArgumentError, "depth: and sample: need stacks: true"
      end
      tracker = _track_start(retained, thread, stacks, depth, sample)
      finished = false
      begin
        yield
        _track_pause(tracker)
        GC.start(full_mark: true, immediate_sweep: true) if retained
        counts = _track_finish(tracker)
        finished = true
      ensure
        # the hooks point into the tracker: never leave them enabled
        _track_finish(tracker) unless finished
      end
      by_stack = _track_stacks(tracker) if stacks
      counts.reject! { |site, _| site.start_with?("#{__FILE__}:") }
      sites = counts.sort_by { |site, n| [-n, site] }.to_h
      return sites unless stacks

      { "sites" => sites, "stacks" => sorted_stacks(by_stack) }
    end

    # call-seq:
    #   HeapDump.malloc_snapshot(path = nil, leaks: false) -> path
    #
    # Has the malloc tracker (libheapdump-malloc.so, loaded by heapdump
    # malloc -- CMD or LD_PRELOAD) write a snapshot of the native
    # allocations by site (man 5 heapdump-malloc) to path, or without one
    # to its next default name ($HEAPDUMP_MALLOC_DIR, else $TMPDIR, else
    # /tmp: heapdump-malloc-PID-SEQ.ndjson). leaks: true adds the leak
    # scan (a forked child; this call waits for it). Raises Error when the
    # process does not run under the tracker.
    def malloc_snapshot(path = nil, leaks: false)
      path = File.expand_path(path.respond_to?(:to_path) ? path.to_path : path.to_s) unless path.nil?
      _malloc_snapshot(path, "api", leaks ? true : false)
    end

    # call-seq:
    #   HeapDump.malloc_leakscan(path = nil) -> path
    #
    # malloc_snapshot(path, leaks: true): the blocks no pointer reaches, by site.
    def malloc_leakscan(path = nil)
      malloc_snapshot(path, leaks: true)
    end

    # call-seq:
    #   HeapDump.malloc_tracking? -> true or false
    #
    # Whether this process runs under the malloc tracker, tracking.
    def malloc_tracking?
      _malloc_active?
    end

    private

    # DUMP.malloc.ndjson beside a dump written to a file, when the process
    # runs under the malloc tracker (its "dump" snapshot)
    def malloc_beside(path)
      return unless File.file?(path)

      _malloc_snapshot("#{path}.malloc.ndjson", "dump", false)
    end

    # track's stacks, most first, without those that track allocated
    # itself (the innermost frame with a file is in this file)
    def sorted_stacks(by_stack)
      by_stack.reject! do |frames, _|
        inner = frames.reverse_each.find { |f, _, _| f }
        inner && inner[0] == __FILE__
      end
      by_stack.sort_by { |frames, n| [-n, frames.to_s] }.to_h
    end

    # nil when the flag bits the walk reads are as it expects on this
    # Ruby (checked once, on live objects), else why not.
    def self_check
      return @self_check if defined?(@self_check)

      h = Hash.new { nil }
      chilled = eval("'a chilled literal'") # rubocop:disable Security/Eval
      @self_check = _self_check([h, h.default_proc, Hash.new(0), ("s" * 5000)[1..], "h" * 5000, chilled,
                                 String.new("x")])
    end

    # DIR/heapdump-PID-TIME-USEC-RANDOM.json: RANDOM, 16 hex digits from
    # the system's random source, so that no other user of a shared DIR
    # can guess the name and plant a file or a link there first.
    def default_path(dir, gzip)
      now = Time.now
      name = format("heapdump-%d-%s-%06d-%s.json%s", Process.pid, now.strftime("%Y%m%dT%H%M%S"),
                    now.usec, random_hex, gzip ? ".gz" : "")
      File.expand_path(name, dump_dir(dir))
    end

    def process_meta
      {
        "heapdump_sidecar" => 1,
        "pid" => Process.pid,
        "host" => _hostname,
        "time" => Time.now.utc.strftime("%Y-%m-%dT%H:%M:%S.%6NZ"),
        "ruby_version" => RUBY_VERSION,
        "ruby_platform" => RUBY_PLATFORM,
        "ruby_description" => RUBY_DESCRIPTION,
        "process" => process_memory,
        "gc_stat" => (st = GC.stat),
        # compactions so far: an untraced diff across one is unreliable
        "gc_compact_count" => st[:compact_count]
      }.merge!(_memory)
    end

    # since: is a GC generation, an unsigned 64-bit count
    SINCE_MAX = 2**64 - 1
    private_constant :SINCE_MAX

    def generation_option(since)
      n = Integer(since, exception: false) if since.is_a?(Integer) || since.is_a?(String)
      return n if n && n >= 0 && n <= SINCE_MAX

      raise ArgumentError, "since: must be a GC generation in 0..#{SINCE_MAX}, not #{since.inspect}"
    end

    def flag_option(name, value)
      return value if value == true || value == false

      raise ArgumentError, "#{name}: must be true or false, not #{value.inspect}"
    end

    # Reading a deprecated constant for its name must not warn (the
    # warning would run Warning.warn, user code, during the dump).
    # (w, a local: the ensure, run after the walk, reads no constant,
    # whose cache would be new in the next dump)
    def quiet_deprecations
      w = Warning
      return yield unless w.respond_to?(:[]) && w.respond_to?(:[]=)

      was = w[:deprecated]
      w[:deprecated] = false
      begin
        yield
      ensure
        w[:deprecated] = was
      end
    end

    # shapes: false/nil: none; true: all (from shape id 0); N: from id N
    def shapes_option(shapes)
      return nil if shapes.nil? || shapes == false

      require "objspace"
      raise ArgumentError, "shapes: needs Ruby 3.2 or later (this is #{RUBY_VERSION})" unless ObjectSpace.respond_to?(:dump_shapes)
      return 0 if shapes == true
      return shapes if shapes.is_a?(Integer) && shapes >= 0

      raise ArgumentError, "shapes: must be true, false or a shape id >= 0, not #{shapes.inspect}"
    end

    # 16 hex digits from the system's random source. Not rand, whose
    # first call seeds the default generator (a Bignum kept, new in the
    # next dump) and whose every call moves the program's own sequence:
    # Random.urandom reads getrandom(2) and keeps nothing. (In a dump's
    # temporary names, its strings are the call's own, left out.)
    def random_hex
      Random.urandom(8).unpack1("H*")
    end

    # The temporary file beside path: a random name that tells nothing of
    # path's (a user watching a shared directory learns no name to plant).
    def temp_path(path)
      File.join(File.dirname(path), ".heapdump-#{Process.pid}-#{random_hex}.tmp")
    end

    # A link or special file that another user owns in a shared directory
    # (sticky and writable by all, as /tmp), unless that user owns the
    # directory: never followed nor opened (the kernel's
    # fs.protected_symlinks rule, which Ruby's own readlink bypasses).
    def foreign?(path, st)
      return false if st.uid == Process.euid

      dst = File.stat(File.dirname(path))
      dst.sticky? && dst.world_writable? && st.uid != dst.uid
    rescue SystemCallError
      false
    end

    # How an output is written: [path, :replace] for a regular file or a
    # name not taken yet (a temporary file renamed over it), [path,
    # :in_place] for a device, FIFO or socket (opened and written, never
    # replaced). Symbolic links are followed, never replaced: path is
    # the file the chain ends at; but with follow: false (the names the
    # gem makes itself) a link is replaced, never followed, and a link or
    # special file of another user in a shared directory is refused. A
    # name that is not there (the usual case) raises and rescues nothing:
    # an exception's objects (its message, backtrace, throw data) are
    # what a conservative GC keeps alive from a stale stack slot, found
    # in the next dump.
    def output_target(path, follow: true)
      links = 0
      while links < 40 # not 40.times: a return from a block makes throw data
        return [path, :replace] unless File.exist?(path) || File.symlink?(path)

        st = begin
          File.lstat(path)
        rescue Errno::ENOENT, Errno::ENOTDIR
          return [path, :replace]
        rescue SystemCallError => e
          raise Error, "heapdump: cannot write #{path}: #{e.message}"
        end
        return [path, :replace] if st.symlink? && !follow
        if !st.file? && foreign?(path, st)
          raise Error, "heapdump: cannot write #{path}: it is a #{st.ftype} of another user in a shared directory"
        end
        if st.symlink?
          path = File.expand_path(File.readlink(path), File.dirname(path))
          links += 1
          next
        end
        return [path, :replace] if st.file?
        return [path, :in_place] if st.chardev? || st.blockdev? || st.pipe? || st.socket?

        raise Error, "heapdump: cannot write #{path}: it is a #{st.ftype}"
      end
      raise Error, "heapdump: cannot write #{path}: too many levels of symbolic links"
    end

    # Opens a device or FIFO for writing, as it is (a FIFO waits for its reader).
    def open_in_place(path)
      IO.sysopen(path, File::WRONLY | File::NOCTTY)
    rescue SystemCallError => e
      raise Error, "heapdump: cannot write #{path}: #{e.message}"
    end

    # Creates the temporary file (0600, never an existing one); an fd.
    def create_temp(path, access = File::WRONLY)
      tmp = temp_path(path)
      [IO.sysopen(tmp, access | File::CREAT | File::EXCL, 0o600), tmp]
    rescue SystemCallError => e
      raise Error, "heapdump: cannot create a dump in #{File.dirname(path)}: #{e.message}"
    end

    # Says once per process (once per reason), on stderr, that dumps go
    # through dump_all.
    def note_fallback(why)
      return if (@fallback_noted ||= {})[why]

      @fallback_noted[why] = true
      $stderr.puts("heapdump: #{why}: HeapDump.dump writes the heap with ObjectSpace.dump_all " \
                   "(its fields and escaping; allocation sites from ObjectSpace's tracing)")
    end

    # ObjectSpace's allocation tracing is on (and ours off): a new object
    # has the source file it was made in, a name used once (a slot freed
    # while tracing was off keeps a stale record). objspace not loaded:
    # it cannot be on.
    def objspace_tracing?
      return false if tracing? || !ObjectSpace.respond_to?(:allocation_sourcefile)

      @probes = (@probes || 0) + 1
      file = "heapdump-probe-#{Process.pid}-#{@probes}"
      ObjectSpace.allocation_sourcefile(eval("Object.new", nil, file, 1)) == file # rubocop:disable Security/Eval
    end

    # Writes the heap to fd (and closes it): the C walk, or dump_all.
    # The walk's SHAPE lines are ObjectSpace.dump_shapes' (the shape
    # tree's layout is private), taken just before.
    # finish: nil, or what _dump does after the walk (write_dump); nil
    # then, else the totals.
    def dump_body(fd, opts, scratch_dir, dumper, finish)
      if dumper == "heapdump"
        shapes = opts[:shapes] && ObjectSpace.dump_shapes(output: :string, since: opts[:shapes])
        return _dump(fd, opts[:gzip], opts[:full], opts[:since], shapes, false, nil, finish) unless opts[:names]

        return quiet_deprecations { _dump(fd, opts[:gzip], opts[:full], opts[:since], shapes, true, nil, finish) }
      end
      sfd = finish&.first
      begin
        fallback_dump(fd, opts, scratch_dir)
      rescue Exception # rubocop:disable Lint/RescueException
        IO.for_fd(sfd).close if sfd
        raise
      end
    end


    # ObjectSpace.dump_all into a scratch file (0600, removed after; in
    # scratch_dir), then copied to fd (through zlib with gzip), counting
    # what the sidecar needs. Not a pipe: from 3.4, dump_all writes with
    # stdio while holding the GVL, so no thread of ours could drain one.
    def fallback_dump(fd, opts, scratch_dir)
      _quiet_end if NATIVE_WALK # dump_all cannot leave anything out
      gzip = opts[:gzip]
      require "objspace"
      require "zlib" if gzip
      out = IO.new(fd, "wb")
      memsize_of_all = ObjectSpace.memsize_of_all
      rfd, raw = create_temp(File.join(scratch_dir, "heapdump-#{Process.pid}.raw"), File::RDWR)
      totals = nil
      File.open(rfd, "w+b") do |io|
        args = { output: io, full: opts[:full] }
        args[:since] = opts[:since] if opts[:since]
        # dump_all writes SHAPE lines unless told not to (3.2+)
        args[:shapes] = opts[:shapes] || false if ObjectSpace.respond_to?(:dump_shapes)
        ObjectSpace.dump_all(**args)
        totals = StreamTotals.new # after: its buffer is not in the dump
        io.flush
        io.rewind
        sink = gzip ? Zlib::GzipWriter.new(out, Zlib::BEST_SPEED) : out
        while (chunk = io.read(1 << 20))
          totals.add(chunk)
          sink.write(chunk)
        end
        sink.close
      end
      totals.finish
      { objects: totals.objects, roots: totals.roots, memsize: totals.memsize,
        memsize_of_all: memsize_of_all, bytes: totals.bytes }
    ensure
      File.unlink(raw) if raw && File.exist?(raw)
      begin
        out.close unless out.nil? || out.closed?
      rescue StandardError
        nil
      end
    end

    # Runs the block, turning its failures other than ours into Error.
    def failing_as_error(path)
      yield
    rescue Exception => e # rubocop:disable Lint/RescueException
      raise if !e.is_a?(StandardError) || e.is_a?(Error)

      raise Error, "heapdump: cannot write #{path}: #{e.message}"
    end

    # The dump to a regular file is written to a temporary one and renamed
    # after the sidecar; a device or FIFO is written in place, without a
    # sidecar (there is no file to put it beside). A failure removes what
    # this call created: the temporary files and the sidecar.
    #
    # Everything after the walk (the sidecar, the renames) is done in C
    # inside _dump: Ruby code run for the first time after the walk would
    # leave call and constant caches that are new in the next dump, and a
    # require would leave a library (issue 34: json's 137 KB "leak").
    def write_dump(path, opts, meta)
      target, how = output_target(path, follow: opts[:follow])
      if how == :in_place
        fd = open_in_place(target)
        failing_as_error(path) { dump_body(fd, opts, dump_dir, meta["dumper"], nil) }
        return path
      end
      fd, tmp = create_temp(target)
      side = nil
      begin
        failing_as_error(path) do
          side = open_sidecar(sidecar_path(path), opts[:follow])
          finish = [side[0], sidecar_doc(meta, path), side[1], side[2], tmp, target]
          totals = dump_body(fd, opts, File.dirname(target), meta["dumper"], finish)
          finish_in_ruby(finish, totals) if totals
        end
      rescue Exception # rubocop:disable Lint/RescueException
        File.unlink(tmp) if File.exist?(tmp)
        File.unlink(side[1]) if side && side[1] && File.exist?(side[1])
        raise
      end
      path
    end

    # Writes data to path by the rule of every output (a temporary file,
    # 0600, renamed over a regular file; a device or FIFO in place; a
    # link followed, but not another user's in a shared directory).
    def write_file(path, data)
      target, how = output_target(path)
      if how == :in_place
        IO.open(open_in_place(target), "wb") { |f| f.write(data) }
        return path
      end
      fd, tmp = create_temp(target)
      begin
        IO.open(fd, "wb") { |f| f.write(data) }
        File.rename(tmp, target)
      rescue StandardError
        File.unlink(tmp) if File.exist?(tmp)
        raise
      end
      path
    end

    # The sidecar's name
    def sidecar_path(path)
      sidecar_paths(path).first
    end

    # The sidecar's output, opened before the walk by the rule of every
    # output: [fd, temporary file, final name] (a temporary file renamed
    # after the walk, in C: a link at the name is replaced, never
    # followed), or [fd, nil, name] for a device or FIFO. follow: false
    # for the names the gem makes itself (output_target).
    def open_sidecar(path, follow)
      target, how = output_target(path, follow: follow)
      return [open_in_place(target), nil, target] if how == :in_place

      fd, tmp = create_temp(target)
      [fd, tmp, target]
    end

    # The sidecar's document but the totals of the walk, whose keys are
    # there (nil) for the walk to fill in (hdx_sidecar_finish).
    def sidecar_doc(meta, dump)
      meta.merge(
        "dump" => File.basename(dump),
        "objects" => nil,
        "roots" => nil,
        "dump_memsize" => nil,
        "memsize_of_all" => nil,
        "dump_bytes" => nil,
        "rss_bytes" => meta.dig("process", "rss"),
        "malloc_in_use_bytes" => meta.dig("process", "malloc", "in_use")
      )
    end

    # What _dump does in C after its walk, for the dump_all fallback
    # (which runs Ruby code anyway): the totals into the sidecar, the
    # sidecar written and renamed, then the dump; the sidecar removed if
    # the last rename fails.
    def finish_in_ruby(finish, totals)
      sfd, doc, stmp, spath, tmp, target = finish
      doc.merge!("objects" => totals[:objects], "roots" => totals[:roots], "dump_memsize" => totals[:memsize],
                 "memsize_of_all" => totals[:memsize_of_all], "dump_bytes" => totals[:bytes])
      _write_json(sfd, doc)
      File.rename(stmp, spath) if stmp
      begin
        File.rename(tmp, target)
      rescue StandardError
        File.unlink(spath) if stmp && File.file?(spath)
        raise
      end
    end

    def fork_dump(path, opts, meta)
      pid = Process.fork do
        begin
          write_dump(path, opts, meta)
          exit!(0)
        rescue Exception => e # rubocop:disable Lint/RescueException
          $stderr.puts("heapdump: dump failed in child #{Process.pid}: #{e.message}")
          exit!(1)
        end
      end
      ForkedDump.new(pid, path, Process.detach(pid))
    end

    # The trap's whole work: queue the request (and, in a process forked
    # after on_signal, where our thread is gone, start it again).
    def signal_request(name)
      signal_worker.push(name)
    end

    def signal_worker
      if @signal_pid != Process.pid || !@signal_thread&.alive?
        @signal_pid = Process.pid
        @signal_queue = Thread::Queue.new
        queue = @signal_queue
        @signal_thread = Thread.new { signal_loop(queue) }
        @signal_thread.name = "heapdump-signal" if @signal_thread.respond_to?(:name=)
      end
      @signal_queue
    end

    def signal_loop(queue)
      loop do
        name = queue.pop
        begin
          o = @signal_opts.fetch(name)
          dump(nil, fork: true, dir: o[:dir], gzip: o[:gzip], full: o[:full], gc: o[:gc], names: o[:names]).wait
        rescue StandardError => e
          $stderr.puts("heapdump: signal dump failed: #{e.message}")
        end
      end
    end
  end
end

# What MRI makes on the first call of what a dump calls and keeps for
# the process (the names of GC.stat's keys): made now, when the gem
# loads, so that the first dump does not make them (HeapDump.dump leaves
# what it allocates out of its own dump: made then, they would be new in
# the next one).
GC.stat
HeapDump.process_memory

# HeapDump.load and HeapDump::Heap: analysing dumps (libheapdump)
require "heapdump/heap"
