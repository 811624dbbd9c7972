# xss_page.rb - a small heap whose names and strings are hostile to a web page,
# for heapdump serve's browser test (tests/cli/serve.sh): a class named
# with markup, strings holding <script>, quotes and control bytes, and an
# allocation site whose file name is markup. One dump, traced.
#
#   /opt/rubies/ruby-3.4.8/bin/ruby --disable-gems xss_page.rb OUT.json
#
# Module#set_temporary_name (Ruby 3.3+) names an anonymous class with any
# text that is not a constant path, so the dump's class name is the markup.
require "objspace"

out = ARGV.fetch(0)
ObjectSpace.trace_object_allocations_start

XSS = "<script>document.title='pwned'</script>"
evil = Class.new
evil.set_temporary_name("<script>window.PWNED=1</script><img src=x onerror=\"window.PWNED=2\">")
HOLD = []
3.times { |i| HOLD << evil.new }
HOLD << XSS.dup
HOLD << "\"quoted\" 'single' & <b>bold</b> \u0001\u0007\e[2J"
HOLD << "</script><script>window.PWNED=3</script>"
# an allocation site whose file name is markup
HOLD << eval("String.new(\"<img src=x onerror=window.PWNED=4>\")", binding,
             "<img src=x onerror=window.PWNED=5>.rb", 1)

GC.start
File.open(out, "w") { |f| ObjectSpace.dump_all(output: f) }
