# templates.rb - issue 34, item 2: a template engine that compiles each
# template into a method of CompiledTemplates with class_eval and a
# string, as ActionView does, and a View class that includes the module
# and calls them. Its cache key wrongly includes the record's id, so
# every render compiles a new method: the instruction sequences are held
# by the module's method table, and the View's method cache points at
# them too.
#
#   ruby templates.rb gem|dump_all OUTDIR      (see harness.rb)
#
# Truth: what the 300 methods compiled in phase A own, measured as the
# growth of the live IMEMOs, Strings and Arrays (after a full GC) across
# phase A: their instruction sequences, method entries (the module's and
# the View's method cache's), crefs, labels and the iseqs' own arrays;
# less the registry's keys of phase A (Strings held by TemplateRegistry
# @compiled, not by the module), measured one by one at the end. Holder:
# CompiledTemplates.

require_relative "harness"

module CompiledTemplates
end

class Template
  attr_reader :source

  def initialize(name, source)
    @name = name
    @source = source
  end

  # Ruby source of the template, compiled as ERB would.
  def compile(method_name)
    body = @source.split(/(<%=.*?%>)/).map do |part|
      if part.start_with?("<%=") then "out << (#{part[3..-3].strip}).to_s"
      else "out << #{part.dump}"
      end
    end
    "def #{method_name}(locals)\n  out = +''\n  #{body.join("\n  ")}\n  out\nend"
  end
end

class View
  include CompiledTemplates

  def initialize(registry)
    @registry = registry
  end

  def render(name, record)
    method_name = @registry.compiled_method(name, record) # the bug: the key has the id
    send(method_name, { record: record })
  end
end

class TemplateRegistry
  def initialize
    @templates = {}
    @compiled = {}
  end

  def add(name, source) = @templates[name] = Template.new(name, source)

  # [count, memsize] of the keys compiled for the ids of range
  def keys_of(name, range)
    keys = @compiled.each_key.select { |k| k.start_with?("#{name}_") && range.cover?(k.split("_").last.to_i) }
    Scenario.measure(keys)
  end

  def compiled_method(name, record)
    key = "#{name}_#{record[:id]}"
    @compiled[key] ||= begin
      method_name = "_render_#{key}"
      CompiledTemplates.class_eval(@templates[name].compile(method_name), "app/views/#{name}.html.erb", 1)
      true
    end
    "_render_#{key}"
  end
end

REGISTRY = TemplateRegistry.new
REGISTRY.add("orders_show", <<~ERB)
  <h1>Order <%= locals[:record][:id] %></h1>
  <p>Customer: <%= locals[:record][:name] %>, <%= locals[:record][:email] %></p>
  <ul><li>Total: <%= locals[:record][:total] %> EUR</li><li>Status: shipped</li></ul>
  <footer>Thank you for shopping with us.</footer>
ERB
VIEW = View.new(REGISTRY)

def request(id)
  record = { id: id, name: "Customer #{id}", email: "c#{id}@example.com", total: id * 3 }
  VIEW.render("orders_show", record).size
end

(0...30).each { |id| request(id) }
Scenario.dump("before")
owned_types = %i[T_IMEMO T_STRING T_ARRAY]
heap0 = Scenario.hidden(*owned_types)
(30...330).each { |id| request(id) }
heap1 = Scenario.hidden(*owned_types)
Scenario.dump("after")
(330...630).each { |id| request(id) }
Scenario.dump("later")

grown = Scenario.grown(heap0, heap1)
keys = REGISTRY.keys_of("orders_show", 30...330)
Scenario.truth(leaks: true, holder_gem: ["CompiledTemplates"], holder_dump_all: ["CompiledTemplates"],
               objects: grown[0] - keys[0], bytes: grown[1] - keys[1],
               note: "300 methods compiled in phase A: the growth of IMEMOs, Strings and Arrays across phase A, less the registry's keys")
