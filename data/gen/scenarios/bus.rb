# bus.rb - issue 34, item 2: an event bus that holds each widget through
# two Method objects (widget.method(:on_resize), widget.method(:on_theme)),
# in two handler lists. Widgets are created per screen and never
# unsubscribed: no single Method keeps a widget alive, the bus does.
#
#   ruby bus.rb gem|dump_all OUTDIR      (see harness.rb)
#
# Truth: the widgets of phase A, their strings, Arrays and Hashes, their
# two Method objects, measured as they are made, plus the IMEMO memsize
# phase A added after a full GC (the method entries a Method may carry).
# Holder: EventBus @handlers.

require_relative "harness"

class EventBus
  def initialize
    @handlers = Hash.new { |h, event| h[event] = [] }
  end

  def subscribe(event, handler)
    @handlers[event] << handler
    handler
  end

  def publish(event, *args)
    @handlers[event].each { |h| h.call(*args) }
  end
end

class Widget
  attr_reader :id, :title, :children

  def initialize(id, title)
    @id = id
    @title = title
    @css = { "width" => "#{100 + id % 40}px", "color" => "#3#{id % 10}a0c0", "font" => "14px Inter, sans-serif" }
    @children = Array.new(4) { |i| "order #{id}: cell #{i} of 4" }
    @width = 0
  end

  def on_resize(width) = @width = width
  def on_theme(name) = @css["theme"] = name

  def owned = [self, @title, @css, *@css.values, @children, *@children]
end

BUS = EventBus.new

$leaked = [0, 0]

def open_screen(id, counting)
  widget = Widget.new(id, "Order ##{id} summary panel")
  a = BUS.subscribe(:resize, widget.method(:on_resize))
  b = BUS.subscribe(:theme, widget.method(:on_theme))
  if counting
    n, bytes = Scenario.measure(widget.owned + [a, b])
    $leaked[0] += n
    $leaked[1] += bytes
  end
  BUS.publish(:resize, 800 + id % 3) if id % 100 == 0
end

(0...40).each { |id| open_screen(id, false) }
BUS.publish(:theme, "dark") # every widget has its theme key from here on
Scenario.dump("before")
hidden0 = Scenario.hidden(:T_IMEMO)
(40...540).each { |id| open_screen(id, true) }
hidden1 = Scenario.hidden(:T_IMEMO)
Scenario.dump("after")
(540...1040).each { |id| open_screen(id, false) }
Scenario.dump("later")

imemo = Scenario.grown(hidden0, hidden1)
Scenario.truth(leaks: true, holder_gem: ["@handlers"], holder_dump_all: ["EventBus"],
               objects: $leaked[0] + imemo[0], bytes: $leaked[1] + imemo[1],
               note: "500 widgets of phase A with their strings and two Method objects each, plus the IMEMO phase A added")
