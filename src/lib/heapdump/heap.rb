# frozen_string_literal: true

# HeapDump::Heap - analysing a dump from Ruby (irb, `heapdump console`).
#
# A thin layer over libheapdump, compiled into the extension: the store
# (the graph of a dump, indexed once and mapped), statistics, selections,
# retention paths, dominators, diff, leaks and the interface are the
# library's, the same code the heapdump command runs, so the answers are
# the command's. This file only shapes arguments and results:
#
#   heap = HeapDump.load("app.json")            # indexes once, then reuses app.json.hds
#   heap.stats(by: [:class, :location]).first(5)
#   sel = heap.select(class: /Plan/, generation: 30..)
#   sel.count; sel.first; heap.path(sel.first)
#
# Objects are HeapDump::HeapObject values (a heap and a node id, every
# field read from the store when asked); selections are lazy Enumerables
# over sets of node ids, so a heap of millions of objects stays in the
# store. See man 3 heapdump-ruby.
#
# Loading: a store (by its magic) is mapped as it is; a dump goes through
# hd_store_open_cached, the library's one cache rule (heapdump serve uses
# it too; man 1 heapdump-serve, CACHE; man 5 heapdump-store, CACHE KEY).
# A store or a dump that another program truncates while it is mapped
# raises SIGBUS, which Ruby reports as a bug (the heapdump command says
# which file shrank and exits 1).
# Objects: HeapObject#retained comes from the dominator tree of the whole
# heap (without the tracer, as top), computed once per heap on first use
# or read from a store indexed with --dominators. skip_weak: true keeps a
# second search and dominator tree, made on first use.
# Selections hold their conditions until first counted or iterated; then
# one hd_select_nodes call makes a NodeSet (4 bytes an object, in C); a
# selection of everything is not even a set. Values of one key given as
# an Array are alternatives, keys all hold; regexps are POSIX extended, as
# on the command line, so Ruby's flags are refused.
# Order: diff and leaks run hd_order_check (Heap._order, hd_order.c) with
# each heap's sidecar and word it with hd_order_text, the commands' own
# words. roots_of, subgraph_of and interface_with on a selection that
# picks no object raise HeapDump::Error: nothing is never "no leak".
module HeapDump
  # Raised by Heap#diff and Heap#leaks for heaps given in the wrong order
  # (newest first), with the words `heapdump diff` and `leaks` say it in;
  # force: true compares them as given.
  class OrderError < Error; end

  # call-seq:
  #   HeapDump.load(path, cache: true, strict: false) -> HeapDump::Heap
  #
  # Opens a store (a .hds file, `heapdump index`) or a dump. A dump is
  # indexed once into a store kept beside it (PATH.hds) when its directory
  # is writable, else under $XDG_CACHE_HOME/heapdump (~/.cache/heapdump),
  # and reused while the dump keeps its size, content and mtime; a changed
  # dump is indexed again. cache: false indexes in memory only.
  # Raises HeapDump::Error (a missing file, not a heap dump, a corrupt
  # store).
  def self.load(path, cache: true, strict: false)
    Heap.load(path, cache: cache, strict: strict)
  end

  # A heap: a store of libheapdump, opened by HeapDump.load.
  class Heap
    include Enumerable

    # the path given to HeapDump.load (a dump or a store), and the store
    # file in use (nil when indexed in memory)
    attr_reader :source, :store_path

    class << self
      # call-seq: Heap.load(path, cache: true, strict: false) -> Heap
      def load(path, cache: true, strict: false)
        path = File.expand_path(path.respond_to?(:to_path) ? path.to_path : path.to_str)
        raise Error, "cannot open '#{path}': No such file or directory" unless File.exist?(path)
        raise Error, "'#{path}' is a directory, not a heap dump" if File.directory?(path)

        heap, store = if _store?(path)
                        [_open(path), path]
                      elsif cache && File.file?(path)
                        cached(path, strict)
                      else
                        [_build(path, strict), nil]
                      end
        heap.__send__(:_loaded, path, store)
      end

      # the store file for a dump: beside it when its directory is
      # writable, else in the cache directory, keyed by path, size and mtime
      def cache_path(dump)
        _cache_path(File.expand_path(dump))
      end

      private

      # the rule is libheapdump's (hd_store_open_cached), heapdump
      # serve's too
      def cached(path, strict)
        heap, store, note = _open_cached(path, strict)
        if note && store
          warn "heapdump: #{note}" # a cached store built again, and why
        elsif note
          warn "heapdump: cannot keep the index of #{path} (#{note}): it stays in memory"
        end
        [heap, store]
      end
    end

    # facts about the dump (nodes, edges, source_path, features...)
    def info
      _info
    end

    # the exact Ruby version the dump names (the gem's dumps: "3.3.10"),
    # else its sidecar's, else the versions its features fit ("3.1",
    # "3.2 or later")
    def ruby_version
      v = _info[:ruby]
      return v if v.match?(/\A\d+\.\d+\.\d+\z/)

      sc = sidecar(warn: false)
      sc && sc["ruby_version"].is_a?(String) && !sc["ruby_version"].empty? ? sc["ruby_version"] : v
    end

    alias length size

    # the number of objects (with arguments or a block: Enumerable#count)
    def count(*args, &block)
      return super if !args.empty? || block

      size
    end

    def inspect
      return "#<HeapDump::Heap #{@source} (closed)>" if closed?

      format("#<HeapDump::Heap %s: %d objects, Ruby %s%s>", @source, size, ruby_version,
             @store_path ? ", store #{@store_path}" : "")
    end

    # call-seq:
    #   heap[address] -> HeapDump::HeapObject or nil
    #
    # The object at address (an Integer, or "0x7f..." as dumps write it).
    def [](address)
      id = _find(HeapDump.address(address))
      id && HeapObject.new(self, id)
    end

    # The object of node id (0...size, in address order).
    def object(id)
      HeapObject.new(self, _node(id))
    end

    # Every object, one at a time, in address order.
    def each(&block)
      return enum_for(:each) { size } unless block

      objects.each(&block)
      self
    end

    # A selection of every object.
    def objects
      Selection.new(self, [])
    end

    # call-seq:
    #   heap.stats(by: :class, all: false, sort: :count) -> [{class:, count:, memsize:}, ...]
    #
    # Objects and memsize grouped by the keys of by (one or several of
    # :type :class :file :location :method :gem :generation :imemo
    # :length), as `heapdump stats --by KEYS` counts them: most first by
    # count (sort: :memsize by memsize). The allocation tracer and
    # dump_all's own objects are left out unless all: true.
    def stats(by: :class, all: false, sort: :count, nodes: nil)
      keys = Array(by).map(&:to_s)
      raise ArgumentError, "sort: :count or :memsize" unless %i[count memsize].include?(sort.to_sym)

      _totals, groups = _stats([keys], all, sort.to_sym == :memsize, nodes)
      syms = keys.map(&:to_sym)
      groups.first.map do |k, count, memsize|
        row = syms.zip(k).to_h
        row[:count] = count
        row[:memsize] = memsize
        row
      end
    end

    # The totals `heapdump stats` prints first: objects, memsize,
    # references, roots, traced, generations, excluded...
    def totals(all: false)
      _stats([["type"]], all, false, nil).first
    end

    # call-seq:
    #   heap.top(10) -> [HeapDump::HeapObject, ...]
    #
    # The objects that retain the most memory (`heapdump top`): the
    # dominator tree of the whole heap, computed once (or read from a
    # store indexed with --dominators). Each object's #retained and
    # #retained_count are its retained set's.
    # With skip_weak: true (`top --skip-weak`) weak references (WeakMap,
    # WeakRef) keep nothing alive, in the tree and in the objects'
    # #retained.
    def top(n = 10, skip_weak: false)
      _top(n, skip_weak).map { |id| HeapObject.new(self, id, skip_weak: skip_weak) }
    end

    FLAME_BY = { path: 1, site: 2, stack: 3 }.freeze # :nodoc:
    FLAME_METRIC = { count: 1, memsize: 2, retained: 3 }.freeze # :nodoc:

    # call-seq:
    #   heap.flame(by: :path, metric: :memsize, format: :folded) -> String
    #
    # The heap's flame graph (`heapdump flame -f folded`): one line
    # "frame;frame;... weight" per stack, for flamegraph.pl, inferno or
    # speedscope. by: :path (the dominator tree, frames named by class
    # and reference name), :site (the allocation site) or :stack (the
    # allocation stacks of HeapDump.trace(stacks: true); raises
    # HeapDump::Error on a dump without them); metric: :count, :memsize
    # or :retained. skip_weak: true as --skip-weak.
    def flame(by: :path, metric: :memsize, format: :folded, skip_weak: false)
      b = FLAME_BY[by.to_sym] or raise ArgumentError, "by: :path, :site or :stack"
      m = FLAME_METRIC[metric.to_sym] or raise ArgumentError, "metric: :count, :memsize or :retained"
      raise ArgumentError, "format: :folded" unless format.to_sym == :folded
      _flame(b, m, skip_weak)
    end

    # `heapdump top --by class`: per class, the reached instances, their
    # memsize and the memory they retain together.
    def top_classes(n = nil, skip_weak: false)
      rows = _top_classes(skip_weak)
      rows = rows.first(n) if n
      rows.map do |name, objects, shallow, count, memsize|
        { class: name, objects: objects, shallow: shallow, retained_count: count, retained_memsize: memsize }
      end
    end

    # The objects the roots reach, and their memsize: [count, memsize].
    def reached
      _reached.first(2)
    end

    # The GC roots: { "vm" => [objects...], ... }
    def roots
      _roots.to_h { |name, ids| [name, ids.map { |id| HeapObject.new(self, id) }] }
    end

    # call-seq:
    #   heap.select(class: /Plan/, file: "app/models/plan.rb", generation: 30.., type: :STRING,
    #               via: "@cache", name: "Foo", location: "a.rb:3", address: 0x7f..,
    #               from: "leaked.json") -> HeapDump::Selection
    #
    # The objects meeting every condition (man 7 heapdump-select); an
    # Array value means any of its values. Lazy: evaluated when first
    # counted or iterated, once.
    def select(**conditions, &block)
      return objects.select(&block) if block && conditions.empty?

      Selection.new(self, Selection.conditions(conditions))
    end
    alias where select

    # call-seq:
    #   heap.path(obj, skip_weak: false) -> HeapDump::Path or nil
    #
    # One shortest path from a GC root to obj (`heapdump path`), nil when
    # no root reaches it. skip_weak: true (--skip-weak) walks through no
    # WeakMap or WeakRef.
    def path(obj, skip_weak: false)
      r = _path(node_of(obj), skip_weak) or return nil
      Path.new(self, *r)
    end

    # call-seq:
    #   heap.dominators(obj, skip_weak: false) -> HeapDump::Path or nil
    #
    # The dominator chain of obj (`heapdump dominators`): each object
    # alone keeps the next alive; obj last. skip_weak: true
    # (--skip-weak): weak references keep nothing alive.
    def dominators(obj, skip_weak: false)
      r = _dominators(node_of(obj), skip_weak) or return nil
      Path.new(self, *r)
    end

    # What keeps sel alive (`heapdump roots-of`): one shortest path from
    # the roots to each of its objects (every ancestor with all: true),
    # as a selection. The objects no root reaches are
    # selection.unreached. skip_weak: true as --skip-weak. Raises
    # HeapDump::Error when sel picks no object (as the command exits 1).
    def roots_of(sel, all: false, skip_weak: false)
      kept, unreached = _roots_of(nonempty_nodes(sel), all, skip_weak)
      Selection.from_nodes(self, kept, unreached: Selection.from_nodes(self, unreached))
    end

    # What sel's objects reach (`heapdump subgraph-of`), at most depth
    # references away (0: no limit). Raises HeapDump::Error when sel picks
    # no object.
    def subgraph_of(sel, depth: 0)
      Selection.from_nodes(self, _subgraph_of(nonempty_nodes(sel), depth))
    end

    # call-seq:
    #   before.diff(after, later = nil, force: false) -> HeapDump::Diff
    #
    # The objects new in after since this heap (`heapdump diff`), and with
    # later those still alive in it. Heaps in the wrong order (by the
    # gem's sidecars' times, else the dumps' allocation generations:
    # libheapdump's check, the command's) raise HeapDump::OrderError
    # unless force: true (then a warning on stderr, as --force).
    def diff(after, later = nil, force: false)
      check_order(after, later, force)
      Diff.new(self, after, later, _diff(after, later))
    end

    # call-seq:
    #   before.leaks(after, later = nil, top: 5, min_share: 0.01, skip_weak: false, force: false) -> HeapDump::Leaks
    #   before.leaks(after, step, ..., later, **opts) -> HeapDump::Leaks
    #
    # `heapdump leaks`: the growth grouped by what holds it, ranked.
    # With more heaps than three (at most 16, oldest first), the leak is
    # still that of BEFORE and AFTER alive in the last, and the verdict
    # names a collection that grows at every step (Leaks#growing), as
    # `heapdump leaks d1 d2 d3 d4` does. skip_weak: true (--skip-weak):
    # weak references hold nothing. Heaps in the wrong order raise
    # HeapDump::OrderError unless force: true, as in #diff.
    #
    # budgets: ["leak.bytes>1MB", "suspect.share>50%"] (the grammar of
    # `heapdump leaks --fail-on`, man 1 heapdump-leaks, BUDGETS) are
    # evaluated against the result: Leaks#budgets, Leaks#exceeded.
    def leaks(after, *later, top: 5, min_share: 0.01, skip_weak: false, force: false, budgets: nil)
      raise ArgumentError, "at most 16 heaps (#{later.size + 2} given)" if later.size > 14

      last = later.last
      steps = later[0...-1] || []
      check_order(after, later, force)
      budgets = Array(budgets).map(&:to_s) unless budgets.nil?
      # (check_order read them, and said what was wrong with them)
      origins = [self, after, *steps, last].compact.map { |h| h.origin(warn: false) }
      Leaks.new(self, after, last, _leaks(after, last, steps, top, min_share, skip_weak, budgets, origins), steps: steps)
    end

    # call-seq:
    #   heap.interface_with(sel) -> HeapDump::Interface
    #
    # `heapdump interface-with`: sel is the set of new objects (a
    # selection, or a Diff's); the border between them and the old ones,
    # each border object with its keepalive_count and retained_count.
    # Raises HeapDump::Error when sel picks no object (an empty set of
    # new objects has no border to find: never an answer of "no leak").
    def interface_with(sel)
      if sel.is_a?(Diff)
        diff = sel
        sel = diff.after.equal?(self) ? diff.added : diff.retained_later
        raise Error, "#{@source}: the diff found no new object#{diff.later ? ' still alive in later' : ''}: no border to find" if sel.empty?
      end
      Interface.new(self, _interface_with(nonempty_nodes(sel)))
    end

    # The sidecar's text, if its user (the link's, if it is one, and the
    # file's) is ours or the dump's: one that another user put beside a
    # dump in a shared directory would give it a pid and a time that the
    # order checks trust. Else nil (and a warning, with warn).
    def read_sidecar(sidecar, dump, warn = true)
      owners = [Process.euid, File.stat(dump).uid]
      link = File.lstat(sidecar)
      File.open(sidecar, "rb") do |f|
        st = f.stat
        unless owners.include?(link.uid) && owners.include?(st.uid) && st.file?
          if warn
            Kernel.warn "heapdump: ignoring '#{sidecar}': owned by uid #{owners.include?(link.uid) ? st.uid : link.uid}, " \
                        "neither the dump's user nor ours"
          end
          return nil
        end
        f.read
      end
    end
    private :read_sidecar

    # The pid, sidecar time and GC compaction count of the dump ([0, nil,
    # nil] when unknown): the gem's sidecar (#sidecar) beside the dump, or
    # beside a store's source dump, as the commands find it.
    def origin(warn: true)
      j = sidecar(warn: warn)
      return [0, nil, nil] unless j

      pid = j["pid"].is_a?(Integer) && j["pid"].positive? ? j["pid"] : 0
      cc = j["gc_compact_count"]
      [pid, j["time"].is_a?(String) ? j["time"] : nil, cc.is_a?(Integer) && cc >= 0 ? cc : nil]
    end

    # The gem's sidecar of the dump as a Hash, read when asked (nil when
    # there is none, or it is not one: said on stderr unless warn: false):
    # DUMP.hdmeta, else DUMP.meta.json as older gems named it, beside the
    # dump or beside a store's source dump, as the commands find it
    # (cli/sidecar.c); read only if its user is ours or the dump's.
    def sidecar(warn: true)
      dump = Heap._store?(@source) ? info[:source_path] : @source
      return nil if dump.nil? || dump.empty?

      path = HeapDump.sidecar_paths(dump).find { |p| File.file?(p) } or return nil
      text = begin
        read_sidecar(path, dump, warn)
      rescue SystemCallError
        nil
      end
      return nil if text.nil?

      require "json"
      j = begin
        JSON.parse(text)
      rescue JSON::ParserError, EncodingError
        nil
      end
      return j if j.is_a?(Hash) && j["rss_bytes"].is_a?(Integer) && j["rss_bytes"] >= 0

      Kernel.warn "heapdump: ignoring '#{path}': not a heapdump sidecar" if warn
      nil
    end

    # call-seq:
    #   HeapDump::Heap.process_growth(heaps) -> Hash or nil
    #
    # Did the process grow outside its Ruby heap from the first of heaps
    # (dumps of one process, oldest first) to the last? libheapdump's
    # judgement (hd_process_judge: the RSS and malloc figures of the
    # gem's sidecars against the heaps' memsize), as `heapdump leaks -f
    # json` has it: {rss_growth:, malloc_growth:, heap_growth:,
    # outside_ruby:, text:}; nil when a heap has no sidecar.
    def self.process_growth(heaps)
      samples = heaps.map do |h|
        j = h.sidecar
        return nil unless j

        mal = j["malloc_in_use_bytes"]
        [j["rss_bytes"], mal.is_a?(Integer) && mal >= 0 ? mal : nil, h._heap_memsize]
      end
      r = _process_judge(samples)
      r && { rss_growth: r[0], malloc_growth: r[1], heap_growth: r[2], outside_ruby: r[3], text: r[4] }
    end

    # What #memory returns: the dump's RSS and its parts, in bytes (nil:
    # the sidecar lacks the figure), which add up to rss; overcount, what
    # the figures said beyond the anonymous memory resident (man 1
    # heapdump-memory).
    Memory = Struct.new(:rss, :slots_live, :slots_free, :stacks, :jit, :object_malloc, :other_malloc,
                        :malloc_free, :other_anon, :file, :unexplained, :overcount, keyword_init: true)

    # call-seq:
    #   heap.memory -> HeapDump::Heap::Memory or nil
    #
    # Where the process's RSS went when the dump began, from the gem's
    # sidecar (#sidecar; nil without one): libheapdump's split
    # (hd_memory_split_get), as `heapdump memory -f json` has it.
    def memory
      j = sidecar or return nil
      int = ->(k) { j[k].is_a?(Integer) && j[k] >= 0 ? j[k] : nil }
      figs = [int["mem_rss"] || int["rss_bytes"], int["mem_anon"],
              int["mem_malloc_in_use"] || int["malloc_in_use_bytes"], int["mem_malloc_free"],
              int["mem_heap_bytes"], int["mem_live_slot_bytes"], int["mem_stacks"], int["mem_jit_code"],
              _heap_memsize]
      r = Heap._memory_split(figs) or return nil
      Memory.new(rss: figs[0], overcount: r[1], **r[0])
    end

    # The id of a node argument: a HeapObject, an address or a node id.
    def node_of(obj) # :nodoc:
      case obj
      when HeapObject
        raise ArgumentError, "#{obj.inspect} is an object of another heap" unless obj.heap.equal?(self)

        obj.id
      else
        id = _find(HeapDump.address(obj))
        raise Error, "no object at #{obj.inspect} in #{@source}" unless id

        id
      end
    end

    # The NodeSet of a selection argument: a Selection, objects, or a Hash
    # of conditions.
    def nodes_of(sel) # :nodoc:
      case sel
      when Selection
        raise ArgumentError, "a selection of another heap" unless sel.heap.equal?(self)

        sel.nodes
      when Hash then select(**sel).nodes
      when HeapObject then _nodeset([node_of(sel)])
      when Enumerable then _nodeset(sel.map { |o| node_of(o) })
      else _nodeset([node_of(sel)])
      end
    end

    private

    # hd_order_check on self, after (and later): warnings on stderr; a
    # reversed pair raises OrderError, its message a line per reversed
    # pair as the command prints them (with force, warnings)
    def check_order(after, later, force)
      heaps = [self, after, *(later.is_a?(Array) ? later : [later])].compact
      heaps.each { |h| raise TypeError, "#{h.inspect} is not a HeapDump::Heap" unless h.is_a?(Heap) }
      refused = []
      Heap._order(heaps, heaps.map(&:source), heaps.map(&:origin)).each do |warnings, reversed, forced|
        warnings.each { |w| warn "heapdump: #{w}" }
        next unless reversed

        force ? warn("heapdump: #{forced}") : refused << reversed
      end
      raise OrderError, refused.join("\n") unless refused.empty?
    end

    # nodes_of(sel), or HeapDump::Error when it holds no object: the
    # command's "the selection picks no object"
    def nonempty_nodes(sel)
      nodes = nodes_of(sel)
      return nodes unless nodes.size.zero?

      why = sel.is_a?(Selection) ? sel.explain.to_s : ""
      why = "no object given" if why.empty?
      raise Error, "#{@source}: the selection picks no object: #{why}"
    end

    def _loaded(source, store)
      @source = source
      @store_path = store
      self
    end

    def _node(id)
      raise IndexError, "node #{id} out of range (0...#{size})" unless id.is_a?(Integer) && id >= 0 && id < size

      id
    end
  end

  # An address argument as an Integer: 0x7f.. or "0x7f..".
  def self.address(a) # :nodoc:
    case a
    when Integer then a
    when String
      s = a.strip
      raise ArgumentError, "not an address: #{a.inspect}" unless s.match?(/\A(0x)?\h+\z/i)

      s.delete_prefix("0x").delete_prefix("0X").to_i(16)
    else raise TypeError, "an address is an Integer or a \"0x...\" String, not #{a.class}"
    end
  end

  # An object of a heap: the heap and its node id; every field is read
  # from the store when asked.
  class HeapObject
    attr_reader :heap, :id

    # skip_weak: #retained is from the tree where weak references keep
    # nothing alive (Heap#top(skip_weak: true) makes such objects)
    def initialize(heap, id, skip_weak: false)
      @heap = heap
      @id = id
      @skip_weak = skip_weak
    end

    def ==(other) = other.is_a?(HeapObject) && other.heap.equal?(heap) && other.id == id
    alias eql? ==
    def hash = [heap.object_id, id].hash

    def address = heap._address(id)
    # "0x7f..."
    def hexaddress = format("0x%x", address)
    # :STRING, :OBJECT, :CLASS...
    def type = heap._type(id)
    # the class name `stats --by class` groups it by ("String", "IMEMO/iseq")
    def class_name = heap._class_name(id)
    # the name every command shows it by: a class by its own name
    def name = heap._node_name(id)
    def memsize = heap._memsize(id)
    # the allocation generation, nil when not traced
    def generation = heap._generation(id)
    # a String's bytesize, an Array's length, a Hash's size; nil if none
    def length = heap._length(id)
    def frozen_in_dump? = heap._frozen(id)
    # the imemo_type of an IMEMO, the struct of a DATA, a class's name
    def aux = heap._aux(id)

    # allocation site: file, line, method (nil when not traced)
    def file = heap._site(id)&.at(0)
    def line = heap._site(id)&.at(1)
    def method_name = heap._site(id)&.at(2)

    # "file:line", nil when not traced
    def site
      f, l, = heap._site(id)
      f && (l ? "#{f}:#{l}" : f)
    end

    # the memsize of what it alone keeps alive (its dominator tree's
    # retained set; the tree is computed once for the heap), 0 when no
    # root reaches it
    def retained(skip_weak: @skip_weak) = heap._retained(id, skip_weak)[1]
    def retained_count(skip_weak: @skip_weak) = heap._retained(id, skip_weak)[0]

    # the objects it references, in dump order
    def references = heap._refs(id).map { |i| HeapObject.new(heap, i) }
    # the objects referencing it
    def referrers = heap._referrers(id).map { |i| HeapObject.new(heap, i) }
    # the names of its references ("@cache", "[3]", nil), parallel to
    # #references (dumped with the gem's names, or inferred)
    def reference_names = heap._ref_names(id)

    # [[name, object]] for its named references
    def named_references
      heap._ref_names(id).zip(heap._refs(id)).filter_map { |n, i| [n, HeapObject.new(heap, i)] if n }
    end

    # the object it references as name ("@cache"), or nil
    def [](name)
      i = heap._ref_names(id).index(name.to_s) and HeapObject.new(heap, heap._refs(id)[i])
    end

    def path(skip_weak: false) = heap.path(self, skip_weak: skip_weak)
    def dominators(skip_weak: false) = heap.dominators(self, skip_weak: skip_weak)
    # the allocation tracer's or dump_all's own object
    def dumper? = heap._dumper?(id)

    def to_h
      f, l, m = heap._site(id)
      { address: hexaddress, type: type, class: class_name, name: name, memsize: memsize,
        generation: generation, file: f, line: l, method: m }
    end

    def inspect
      s = +"#<#{hexaddress} #{name}"
      s << " (#{type})" unless name == type.to_s
      s << " memsize=#{memsize}"
      s << " retained=#{retained}" if heap._dom_ready?(@skip_weak)
      s << " len=#{length}" if length
      st = site
      s << " #{st}" if st
      s << " gen=#{generation}" if generation
      s << ">"
      s
    end
    alias to_s inspect

    def pretty_print(q) = q.text(inspect)
  end

  # A retention path or a dominator chain: a root category (nil for a
  # chain that several roots lead to), the name under which it holds the
  # first object, and the objects, the target last.
  class Path
    include Enumerable

    # note: nil, or why the path is not the shortest one (libheapdump's
    # hd_path_note): "program-level holders preferred to the shortest
    # path, from machine_context through a VM cache"
    attr_reader :heap, :root, :root_name, :ids, :note

    def initialize(heap, root, root_name, ids, note = nil)
      @heap = heap
      @root = root
      @root_name = root_name
      @ids = ids
      @note = note
    end

    def objects = ids.map { |i| HeapObject.new(heap, i) }
    def each(&block) = objects.each(&block)
    def length = ids.length
    alias size length
    def target = HeapObject.new(heap, ids.last)

    # the runs of repeated hops, as every text output folds them
    # (libheapdump's hd_path_fold): [[start, period, count]...], the
    # period hops from ids[start] repeated count times
    def runs = @runs ||= heap._path_runs(ids)

    # the hops as every command prints them: "Node name -> Node name ->
    # ... -> Target" (the chain line of `heapdump path`), each run of
    # repeated hops folded: "Array [0] -> (Proc -> IMEMO/env prev ->)
    # x1000 Proc"; #ids and #objects keep every hop
    def to_s
      out = +""
      i = 0
      rs = runs
      while i < ids.length
        start, period, count = rs.first
        if start == i
          rs = rs.drop(1)
          out << "(" << (i...i + period).map { |k| "#{hop(k)} ->" }.join(" ") << ") x#{count} "
          i += period * count
        else
          out << hop(i)
          out << " -> " if i + 1 < ids.length
          i += 1
        end
      end
      out
    end

    # the root and the hops: "vm $cache -> Hash [\"k\"] -> Request"
    def text
      r = [root, root_name].compact.join(" ")
      r.empty? ? to_s : "#{r} -> #{to_s}"
    end

    def inspect = "#<HeapDump::Path #{text}>"

    private

    def hop(k) = heap._hop_text(ids[k], ids[k + 1])

    public

    def pretty_print(q) = q.text(inspect)
  end

  # A lazy selection of a heap's objects (HeapDump::Heap#select): the
  # conditions are evaluated by libheapdump when first needed, once, into
  # a set of node ids; iterating makes one HeapObject at a time.
  class Selection
    include Enumerable

    KEYS = %i[address class type file location generation name via from].freeze

    attr_reader :heap

    # [[key, value]...] for the library's grammar (man 7 heapdump-select)
    def self.conditions(h) # :nodoc:
      h.flat_map do |k, v|
        key = k.to_sym
        raise ArgumentError, "unknown condition #{k.inspect} (#{KEYS.join(' ')})" unless KEYS.include?(key)

        (v.is_a?(Array) ? v : [v]).map { |x| [key.to_s, value(key, x)] }
      end
    end

    def self.value(key, v) # :nodoc:
      case v
      when Regexp
        raise ArgumentError, "#{v.inspect}: only plain /regex/ (POSIX extended) is supported" unless v.options.zero?

        "/#{v.source}/"
      when Range
        raise ArgumentError, "a range is only for generation:" unless key == :generation

        last = v.end && (v.exclude_end? ? v.end - 1 : v.end)
        "#{v.begin}..#{last}"
      when Integer then key == :address ? format("0x%x", v) : v.to_s
      when HeapObject then format("0x%x", v.address)
      when Symbol, String then v.to_s
      else
        raise ArgumentError, "#{key}: #{v.inspect} is not a String, Symbol, Integer, Range or Regexp" unless v.respond_to?(:to_path)

        v.to_path
      end
    end

    def self.from_nodes(heap, nodes, unreached: nil) # :nodoc:
      s = new(heap, [], nodes: nodes)
      s.instance_variable_set(:@unreached, unreached)
      s
    end

    # the objects of roots_of's selection that no root reaches
    attr_reader :unreached

    def initialize(heap, conds, nodes: nil, parent: nil, desc: nil)
      @heap = heap
      @conds = conds
      @nodes = nodes
      @parent = parent
      @desc = desc
      @missing = 0
    end

    # everything, not evaluated
    def everything? = @nodes.nil? && @parent.nil? && @conds.empty?

    # the set of node ids (evaluated once)
    def nodes # :nodoc:
      @nodes ||= begin
        set, @missing = @heap._select(@conds)
        @parent ? @parent.nodes & set : set
      end
    end

    # addresses given (address:, from:) that are not objects of the heap
    def missing
      nodes
      @missing
    end

    # one HeapObject at a time, in address order
    def each
      return enum_for(:each) { size } unless block_given?

      if everything?
        @heap.size.times { |id| yield HeapObject.new(@heap, id) }
      else
        nodes.each_id { |id| yield HeapObject.new(@heap, id) }
      end
      self
    end

    # the number of objects, without making any
    def size
      everything? ? @heap.size : nodes.size
    end
    alias length size

    def count(*args, &block)
      return super if !args.empty? || block

      size
    end

    def empty? = size.zero?

    # the i-th object (address order)
    def [](i)
      if everything?
        i += size if i.negative?
        return (0...size).cover?(i) ? HeapObject.new(@heap, i) : nil
      end
      id = nodes[i] and HeapObject.new(@heap, id)
    end

    # the node ids, as an Array
    def ids = everything? ? (0...@heap.size).to_a : nodes.each_id.to_a

    # narrows the selection: both its conditions and these (with a block
    # and no conditions: Enumerable#select)
    def select(**conditions, &block)
      return super(&block) if block && conditions.empty?

      Selection.new(@heap, Selection.conditions(conditions), parent: self)
    end
    alias where select

    def &(other) = combine(other, :&)
    def |(other) = combine(other, :|)
    def -(other) = combine(other, :-)

    # without the allocation tracer's and dump_all's own objects
    def without_dumper = Selection.from_nodes(@heap, full_nodes._drop_dumper)

    # why it picks nothing (the conditions no object meets, the nearest
    # names), as the commands say it
    def explain
      @heap._explain(@conds)
    end

    # stats of its objects (HeapDump::Heap#stats)
    def stats(by: :class, all: true, sort: :count)
      @heap.stats(by: by, all: all, sort: sort, nodes: full_nodes)
    end

    # call-seq:
    #   sel.write(path, roots: true) -> path
    #
    # Writes the objects' records as NDJSON that every heapdump command
    # reads (and --from selects): with roots: true (as roots-of -o) the
    # ROOT records first and every reference restricted to the set, a
    # dump of its own. Through a temporary file renamed over path.
    def write(path, roots: true)
      full_nodes._write(path.respond_to?(:to_path) ? path.to_path : path.to_str, roots)
    end

    # The records as a String (as write writes them).
    def to_ndjson(roots: true) = full_nodes._write(nil, roots)

    # call-seq:
    #   sel.to_gml(path = nil, collapse: false, depth: 0, max_nodes: 50_000) -> path or String
    #
    # The objects (and depth references further) as GML (`heapdump
    # to-gml`): networkx and Gephi read it.
    def to_gml(path = nil, collapse: false, depth: 0, max_nodes: 50_000)
      full_nodes._export(path && File.expand_path(path), false, collapse, depth, max_nodes)
    end

    # As to_gml, a Graphviz digraph (`heapdump to-dot`).
    def to_dot(path = nil, collapse: false, depth: 0, max_nodes: 50_000)
      full_nodes._export(path && File.expand_path(path), true, collapse, depth, max_nodes)
    end

    # Draws the graph with Graphviz's dot (svg, png or pdf by the name).
    def render(path, collapse: true, depth: 0, max_nodes: 2_000)
      fmt = File.extname(path).delete_prefix(".")
      raise ArgumentError, "render: .svg, .png or .pdf, not #{path}" unless %w[svg png pdf].include?(fmt)

      dot = to_dot(collapse: collapse, depth: depth, max_nodes: max_nodes)
      # dot draws into a pipe, and the gem writes the file by the rule
      # of every output (dot's own -o would follow any link at path)
      out = IO.popen(["dot", "-T#{fmt}"], "r+b") do |io|
        writer = Thread.new do
          io.write(dot)
        ensure
          io.close_write
        end
        data = io.read
        writer.join
        data
      end
      raise Error, "dot failed (#{$?.inspect}): install graphviz" unless $?.success?

      HeapDump.__send__(:write_file, File.expand_path(path), out)
      path
    rescue Errno::ENOENT
      raise Error, "render needs Graphviz's dot on PATH: install graphviz"
    end

    def roots_of(all: false, skip_weak: false) = @heap.roots_of(self, all: all, skip_weak: skip_weak)
    def subgraph_of(depth: 0) = @heap.subgraph_of(self, depth: depth)
    def interface_with = @heap.interface_with(self)

    def inspect
      what = @desc || describe
      "#<HeapDump::Selection #{what}#{what.empty? ? '' : ': '}#{size} objects>"
    end

    def pretty_print(q) = q.text(inspect)

    # the NodeSet even for "everything"
    def full_nodes # :nodoc:
      everything? ? (@nodes = @heap._all_nodeset) : nodes
    end

    protected

    def describe
      own = @conds.map { |k, v| "#{k}: #{v}" }.join(", ")
      up = @parent&.describe
      [up, own].reject { |x| x.nil? || x.empty? }.join(" & ")
    end

    private

    def combine(other, op)
      other = @heap.select(**other) if other.is_a?(Hash)
      raise ArgumentError, "a selection of another heap" unless other.heap.equal?(@heap)

      Selection.from_nodes(@heap, full_nodes.public_send(op, other.full_nodes))
    end
  end

  # A diff of two heaps (HeapDump::Heap#diff): the counts `heapdump diff
  # -f json` prints, and the objects as selections.
  class Diff
    attr_reader :before, :after, :later

    def initialize(before, after, later, h)
      @before = before
      @after = after
      @later = later
      @h = h
    end

    # the objects new in after (objects of after)
    def added = Selection.from_nodes(@after, @h[:added])
    alias new_objects added
    # with later: the new objects still alive in later (objects of after)
    def retained = Selection.from_nodes(@after, @h[:retained])

    # with later: the same objects as later holds them (objects of later)
    def retained_later
      raise ArgumentError, "no later heap: diff(after, later)" unless @later

      Selection.from_nodes(@later, @h[:retained_later])
    end

    def added_count = @h[:added].size
    def added_memsize = @h[:added_memsize]
    def retained_count = @h[:retained].size
    def retained_memsize = @h[:retained_memsize]
    # how many AFTER objects each rule's verdict concerns
    def verdicts = @h[:verdicts]
    def rules = @h[:rules]
    def uncertain = @h[:uncertain]
    def generation = @h[:generation]
    def traced? = @h[:traced]

    # The counts as `heapdump diff -f json` has them.
    def to_h
      r = { rules: rules, generation: traced? ? generation : nil,
            new: { count: added_count, memsize: added_memsize }, uncertain: uncertain, verdicts: verdicts }
      r[:retained] = @later ? { count: retained_count, memsize: retained_memsize, uncertain: @h[:retained_uncertain], moved: @h[:retained_moved] } : nil
      r
    end

    def inspect
      s = "#<HeapDump::Diff new #{added_count} objects (#{added_memsize} bytes)"
      s += ", still alive in later #{retained_count} (#{retained_memsize} bytes)" if @later
      "#{s}, rules #{rules.join(', ')}>"
    end

    def pretty_print(q) = q.text(inspect)
  end

  # The leak model (HeapDump::Heap#leaks), `heapdump leaks`.
  class Leaks
    # A suspect: the one old holder (or, held by several, the first
    # border object), and the growth it holds. Its members are the
    # suspect's of man 5 heapdump-json, as `heapdump leaks -f json` and
    # Leaks#as_json name them: holder_count and root_count count the old
    # objects and root categories holding it, holders is the holder
    # objects (a Selection, at most 8; empty for a root), first_border a
    # HeapObject, kind a Symbol; border (a Selection) is the gem's own.
    # stacks: for a dump traced with HeapDump.trace(stacks: true), what
    # the suspect keeps alive by allocation stack, most memory first,
    # as the suspect's "stacks" of `heapdump leaks -f json` (which has
    # the first --sites rows; here every row): a Hash with :by
    # ("stack"), :with_stack and :without_stack ({count:, memsize:}),
    # :groups and :rows, each {stack:, count:, memsize:, frames:} with
    # the frames outermost first, each {frame:, file:, line:, method:,
    # class:, label:} (what the dump gave; frozen, shared between rows);
    # nil without stacks and for a suspect not described.
    Suspect = Struct.new(:rank, :holder, :kind, :holder_count, :root_count, :transient, :churn, :ephemeron,
                         :holders, :first_border, :border_count, :retained_count, :retained_memsize, :share,
                         :keepalive_count, :keepalive_memsize, :path, :border, :stacks) do
      # deprecated (one release): first_border's old name
      def first = first_border

      def inspect
        who = holder ? "held by #{holder.inspect}" : "#{first_border.inspect} (held by #{holder_count} old objects, #{root_count} roots)"
        format("#<Suspect #%d %s: %d objects, %d bytes retained (%.1f%%)%s>", rank, who, retained_count,
               retained_memsize, share * 100, path ? ", path #{path.text}" : "")
      end

      def pretty_print(q) = q.text(inspect)
    end

    # A Hash or Array of the last heap whose length grew at every step
    Growing = Struct.new(:object, :type, :lengths) do
      def inspect = "#<Growing #{object.inspect} #{lengths.join(' -> ')}>"
      def pretty_print(q) = q.text(inspect)
    end

    attr_reader :diff, :heap, :suspects, :clusters, :steps, :growing

    def initialize(before, after, later, h, steps: [])
      @h = h
      @steps = steps
      @diff = Diff.new(before, after, later, h)
      @heap = h[:heap]
      @suspects = h[:suspects].each_with_index.map do |s, i|
        Suspect.new(i + 1, s[:holder] && HeapObject.new(@heap, s[:holder]), s[:kind].to_sym, s[:holder_count],
                    s[:root_count], s[:transient], s[:churn], s[:ephemeron],
                    Selection.from_nodes(@heap, s[:holders]), HeapObject.new(@heap, s[:first_border]),
                    s[:border_count], s[:retained_count], s[:retained_memsize], s[:share], s[:keepalive_count],
                    s[:keepalive_memsize], s[:path] && Path.new(@heap, *s[:path]),
                    s[:border] && Selection.from_nodes(@heap, s[:border]), s[:stacks])
      end
      @clusters = h[:clusters].map do |c|
        c.merge(path: c[:path] && Path.new(@heap, *c[:path]))
      end
      @growing = h[:growing].map { |id, type, lengths| Growing.new(HeapObject.new(@heap, id), type, lengths) }
    end

    # the leak: with later the new objects still alive in it, else the new ones
    def count = @h[:leak_count]
    def memsize = @h[:leak_memsize]
    def border = @h[:border]
    def groups = @h[:groups]
    # the suspects described (paths, borders)
    def shown = @suspects.first(@h[:shown])
    # the verdict, the sentence every front end prints first (beside a
    # process that grew outside Ruby objects, #outside_ruby, a leak under
    # the threshold is "not in the Ruby heap", as the commands say it)
    def verdict = outside_ruby && @h[:verdict_outside] ? @h[:verdict_outside] : @h[:verdict]
    # false when what leaked is under the threshold (no significant leak)
    def leak? = @h[:significant]
    # what the verdict names first: [:suspect, rank] or [:cluster, rank], or nil
    def first = @h[:first_kind] && [@h[:first_kind].to_sym, @h[:first_index] + 1]
    # the budgets given to Heap#leaks, evaluated: [{text:, exceeded:,
    # value:, limit:, over:, message:}] ([] without budgets)
    def budgets = @h[:budgets] || []
    # those exceeded
    def exceeded = budgets.select { |b| b[:exceeded] }

    # what qualifies the verdict, as `heapdump leaks -f json`'s
    # "caveats": [{ name: "two-dumps", warning: true, text: "..." }, ...]
    # (names in man 5 heapdump-json)
    def caveats = @h[:caveats]

    # the leak in the one JSON schema of `heapdump leaks -f json`,
    # serve's /api/leaks and the report's data (man 5 heapdump-json): a
    # Hash with "verdict", "totals", "caveats", "suspects" (the ones
    # described, each with its "path"), "clusters_total" and "clusters"
    def as_json(*)
      require "json"
      JSON.parse(@h[:json] || raise(NoMemoryError, "no JSON of the leak"))
    end

    # the totals as `heapdump leaks -f json` has them
    def to_h
      { leaked: { count: count, memsize: memsize }, border: border, groups: groups, more: @h[:more],
        folded: { groups: @h[:folded], retained_count: @h[:folded_count], retained_memsize: @h[:folded_memsize] },
        caveats: caveats }
    end

    def inspect
      "#<HeapDump::Leaks #{outside_ruby ? "#{outside_ruby}; " : ''}#{verdict}; #{count} objects (#{memsize} bytes) leaked, #{groups} suspects>"
    end

    def pretty_print(q) = q.text(inspect)

    # The process growth of the dumps' sidecars (Heap.process_growth),
    # as `heapdump leaks -f json`'s "process": nil without sidecars.
    def process
      return @process if defined?(@process)

      @process = Heap.process_growth([@diff.before, @diff.after, *@steps, @diff.later].compact)
    end

    # "the process grew by ...: the growth is outside Ruby objects" when
    # it did (what `heapdump leaks` prints first), else nil
    def outside_ruby
      process && process[:outside_ruby] ? process[:text] : nil
    end
  end

  # The border between a set of new objects and the old ones
  # (HeapDump::Heap#interface_with), `heapdump interface-with`.
  class Interface
    # A new object held by old ones (or roots), ranked by keepalive_count
    Border = Struct.new(:object, :keepalive_count, :keepalive_memsize, :retained_count, :retained_memsize,
                        :holders, :roots, :held_by) do
      def inspect
        "#<Border #{object.inspect} keepalive_count=#{keepalive_count} retained_count=#{retained_count} holders=#{holders}>"
      end

      def pretty_print(q) = q.text(inspect)
    end
    # An old object holding new ones: how many, and what they keep alive
    Holder = Struct.new(:object, :held, :keepalive)

    attr_reader :heap, :border, :holders, :totals

    def initialize(heap, h)
      @heap = heap
      @border = h[:border].map do |b|
        Border.new(HeapObject.new(heap, b[:id]), b[:keepalive_count], b[:keepalive_memsize], b[:retained_count],
                   b[:retained_memsize], b[:holders], b[:roots], b[:held_by].map { |i| HeapObject.new(heap, i) })
      end
      @holders = h[:holders].map { |x| Holder.new(HeapObject.new(heap, x[:id]), x[:held], x[:keepalive]) }
      @totals = h.reject { |k, _| %i[border holders].include?(k) }
    end

    def inspect
      "#<HeapDump::Interface #{@totals[:diff]} new objects, border #{@border.size} new held by #{@holders.size} old>"
    end

    def pretty_print(q) = q.text(inspect)
  end
end

