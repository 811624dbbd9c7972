# make_bad.rb - writes the hand-made bad_* and edge_* dumps and their .expect
# files into data/dumps (or the directory given as ARGV[0]).
#
#   ruby make_bad.rb [OUTDIR]
#
# Each file is a variant of one small, valid dump in the Ruby 3.1 layout
# (BASE below: 2 ROOT lines with 3 references, 10 objects). The expected
# numbers in NAME.expect come from how the variant was built, not from a
# reader; make_fixtures.sh then checks them against count.rb.
#
# .expect keys (one key=value a line), for a tolerant reader:
#   objects=N         heap object records recovered (first record per address)
#   roots=N           sum of the ROOT lines' references
#   bad_lines=N       records that must be reported as skipped or repaired
#                     (a record split over several physical lines counts once)
#   first_bad_line=N  1-based physical line of the first reported record; 0 if
#                     none. Strict mode must fail there (bad_* files only).
#   why=...           one line
# and where they apply:
#   duplicates=N      later records of an already seen address (not objects)
#   dangling=N        references to addresses with no object record
#   truncated=1       the file does not end with "\n"
#   format=NAME       not dump_all NDJSON (memprof); count.rb does not read it
#   exit=N            the exit status of `heapdump stats`, lenient and strict,
#                     when not 0 (the input cannot be read as a dump at all)
#
# bad_*:  strict mode must report an error (first_bad_line says where).
# edge_*: odd but acceptable: strict mode accepts them, bad_lines=0; except
#         edge_empty.json, which has no bad line but is no heap dump (exit=1).

require "zlib"

OUT = ARGV[0] || File.expand_path("../dumps", __dir__)

BASE = <<~'NDJSON'.lines
  {"type":"ROOT", "root":"vm", "references":["0x7f3a5c012340", "0x7f3a5c012368"]}
  {"type":"ROOT", "root":"global_tbl", "references":["0x7f3a5c012390"]}
  {"address":"0x7f3a5c012340", "type":"CLASS", "class":"0x7f3a5c0ff000", "superclass":"0x7f3a5c012368", "name":"Request", "references":["0x7f3a5c012368", "0x7f3a5c0123b8"], "memsize":472, "flags":{"wb_protected":true, "old":true, "uncollectible":true, "marked":true}}
  {"address":"0x7f3a5c012368", "type":"CLASS", "class":"0x7f3a5c0ff028", "name":"Base", "references":["0x7f3a5c0123e0"], "memsize":472, "flags":{"wb_protected":true, "old":true, "uncollectible":true, "marked":true}}
  {"address":"0x7f3a5c012390", "type":"HASH", "class":"0x7f3a5c0ff050", "size":1, "references":["0x7f3a5c012408", "0x7f3a5c012430"], "file":"app.rb", "line":3, "generation":1, "memsize":160, "flags":{"wb_protected":true}}
  {"address":"0x7f3a5c0123b8", "type":"STRING", "class":"0x7f3a5c0ff078", "frozen":true, "embedded":true, "fstring":true, "bytesize":12, "value":"request body", "encoding":"UTF-8", "memsize":40, "flags":{"wb_protected":true, "old":true, "uncollectible":true, "marked":true}}
  {"address":"0x7f3a5c0123e0", "type":"STRING", "class":"0x7f3a5c0ff078", "frozen":true, "embedded":true, "fstring":true, "bytesize":4, "value":"Base", "encoding":"US-ASCII", "memsize":40, "flags":{"wb_protected":true, "old":true, "uncollectible":true, "marked":true}}
  {"address":"0x7f3a5c012408", "type":"STRING", "class":"0x7f3a5c0ff078", "frozen":true, "embedded":true, "bytesize":2, "value":"k1", "encoding":"UTF-8", "file":"app.rb", "line":4, "generation":1, "memsize":40, "flags":{"wb_protected":true}}
  {"address":"0x7f3a5c012430", "type":"OBJECT", "class":"0x7f3a5c012340", "ivars":3, "references":["0x7f3a5c012458", "0x7f3a5c012480"], "file":"app.rb", "line":4, "method":"new", "generation":1, "memsize":40, "flags":{"wb_protected":true}}
  {"address":"0x7f3a5c012458", "type":"STRING", "class":"0x7f3a5c0ff078", "embedded":true, "bytesize":9, "value":"payload 1", "encoding":"UTF-8", "file":"app.rb", "line":9, "method":"initialize", "generation":1, "memsize":40, "flags":{"wb_protected":true}}
  {"address":"0x7f3a5c012480", "type":"ARRAY", "class":"0x7f3a5c0ff0a0", "length":2, "embedded":true, "references":["0x7f3a5c0124a8"], "file":"app.rb", "line":10, "method":"initialize", "generation":1, "memsize":40, "flags":{"wb_protected":true}}
  {"address":"0x7f3a5c0124a8", "type":"FLOAT", "class":"0x7f3a5c0ff0c8", "frozen":true, "value":"1.00000e+300", "file":"app.rb", "line":10, "method":"initialize", "generation":1, "memsize":40, "flags":{"wb_protected":true}}
NDJSON
BASE_OBJECTS = 10
BASE_ROOTS = 3

# Physical line numbers (1-based) of some BASE records
L_PAYLOAD = 10      # STRING "payload 1" (traced, has file/method)
L_OBJECT = 9        # the Request OBJECT
L_FLOAT = 12        # the last record

$written = []

# gzip with a fixed header (mtime 0, OS 3), so the output is reproducible
def gzip(data)
  z = Zlib::Deflate.new(9, -Zlib::MAX_WBITS)
  body = z.deflate(data, Zlib::FINISH)
  z.close
  "\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\x03".b + body + [Zlib.crc32(data), data.bytesize].pack("VV")
end

def write(name, data, expect)
  File.binwrite(File.join(OUT, name), data)
  e = { "objects" => BASE_OBJECTS, "roots" => BASE_ROOTS, "bad_lines" => 0, "first_bad_line" => 0 }.merge(expect)
  why = e.delete("why") or raise "#{name}: no why"
  body = e.map { |k, v| "#{k}=#{v}\n" }.join + "why=#{why}\n"
  File.binwrite(File.join(OUT, "#{name}.expect"), body)
  $written << name
end

def base_with(replacements = {}, inserts = {})
  lines = BASE.dup
  replacements.each { |n, text| lines[n - 1] = text }
  inserts.sort.reverse_each { |n, text| lines.insert(n - 1, text) }
  lines.join
end

# ---------------------------------------------------------------- bad_ ---

cut = BASE[L_FLOAT - 1].index(", \"value\"") + 5
write("bad_truncated.json",
      BASE[0...L_FLOAT - 1].join + BASE[L_FLOAT - 1][0, cut],
      "objects" => BASE_OBJECTS - 1, "bad_lines" => 1, "first_bad_line" => L_FLOAT, "truncated" => 1,
      "why" => "last record cut mid-line, no final newline (crash, kill or full disk): the partial FLOAT is not an object")

write("bad_raw_quote_file.json",
      base_with(L_PAYLOAD => BASE[L_PAYLOAD - 1].sub('"file":"app.rb"', '"file":"we"ird.rb"')),
      "bad_lines" => 1, "first_bad_line" => L_PAYLOAD,
      "why" => "file is written raw: eval(code, b, 'we\"ird.rb') gives \"file\":\"we\"ird.rb\"; invalid JSON but repairable, the object counts")

write("bad_raw_quote_name.json",
      base_with(3 => BASE[2].sub('"name":"Request"', '"name":"tmp"quoted<name>"')),
      "bad_lines" => 1, "first_bad_line" => 3,
      "why" => "class name written raw (Ruby 3.3.0-3.3.6, Module#set_temporary_name with a quote): invalid JSON but repairable, the class counts")

write("bad_raw_newline_file.json",
      base_with(L_PAYLOAD => BASE[L_PAYLOAD - 1].sub('"file":"app.rb"', "\"file\":\"dir\nname.rb\"")),
      "bad_lines" => 1, "first_bad_line" => L_PAYLOAD,
      "why" => "raw newline in file splits one record over lines #{L_PAYLOAD}-#{L_PAYLOAD + 1}; rejoin them (the second does not start with '{'): one repaired record")

# Ruby 3.0/3.1.2: each byte >= 0x80 in an escaped string becomes \u00ff plus
# 6 bytes: a NUL and 5 stale bytes of the 4 KB output buffer. "grüße" has 4
# such bytes. The junk may hold quotes; here it holds no newline.
junk = ["\0x7f3a", "\0ddres", "\0:true", "\0\"line"]
garbled = "gr" + "\\u00ff" + junk[0] + "\\u00ff" + junk[1] + "e" + "\\u00ff" + junk[2] + "\\u00ff" + junk[3] + "e"
write("bad_escape_garbage_31.json",
      base_with(L_OBJECT => BASE[L_OBJECT - 1].sub('"method":"new"', "\"method\":\"#{garbled}\"")),
      "bad_lines" => 1, "first_bad_line" => L_OBJECT,
      "why" => "Ruby 3.0/3.1.2 escaping bug: non-ASCII method name grüße written as \\u00ff + NUL + 5 stale bytes per high byte; invalid JSON with raw NULs, repairable")

# As observed in a real 3.1.2 dump (ok_ruby3.1_traced.json): the stale bytes
# held the end of an earlier record, newline included, so the record is cut
# in two and the second piece starts with '{'. The first piece is repairable
# (address, type; its trailing fields are lost), the second has no address
# or type and is skipped.
split_junk1 = "\0}}\n{\"\\u00ff\0\":\"0x\\u00ff\0"
obj = BASE[L_OBJECT - 1]
head = obj[0...obj.index('"method":"new"')]
split = head + "\"method\":\"gr\\u00ff" + split_junk1 + "1e240\\u00ff\0e\":\"Se_\\u00ff\0class\\u00ff\0" +
        "3a5c0\\u00ff\0 \"fro\", \"generation\":1, \"memsize\":40, \"flags\":{\"wb_protected\":true}}\n"
split_lines = BASE.dup
split_lines[L_OBJECT - 1] = split
write("bad_escape_garbage_split.json", split_lines.join,
      "bad_lines" => 2, "first_bad_line" => L_OBJECT,
      "why" => "3.1.2 escaping bug whose stale bytes contain '}}\\n{': one record becomes two lines, the 2nd starting with '{'; repair the 1st (object counts, memsize lost), skip the 2nd")

rng = Random.new(20240611)
garbage = lambda do
  s = rng.bytes(90).delete("\n").b
  s[0] = "\x8b".b if s.start_with?("{")
  s << "\x01".b if s.end_with?("}")
  s + "\n"
end
write("bad_binary_garbage.json", base_with({}, 5 => garbage.call, 9 => garbage.call),
      "bad_lines" => 2, "first_bad_line" => 5,
      "why" => "two lines of binary garbage (NULs, invalid UTF-8) between records at lines 5 and 10; skip both")

write("bad_non_json_line.json",
      base_with({}, 7 => "I, [2024-06-11T10:00:00.123456 #4242]  INFO -- : Completed 200 OK in 12ms\n"),
      "bad_lines" => 1, "first_bad_line" => 7,
      "why" => "program output mixed into the dump (dump_all(output: :stdout)): one non-JSON line at line 7, skipped")

write("bad_lone_brace.json", base_with({}, 6 => "{\n"),
      "bad_lines" => 1, "first_bad_line" => 6,
      "why" => "a line that is only '{' at line 6: skipped, nothing recovered (the next line starts with '{', so no rejoin)")

write("bad_no_address.json",
      base_with({}, 3 => '{"type":"METADATA", "version":"9.9", "pid":4242}' + "\n",
                    8 => '{"type":"SYMBOL", "value":"sym"}' + "\n"),
      "bad_lines" => 2, "first_bad_line" => 3,
      "why" => "records without an address (another tool's METADATA line at line 3; ObjectSpace.dump(:sym) of a static symbol at line 9): no heap object, reported and skipped; strict fails at line 3")

gz = gzip(BASE.join)
# Replace the deflate data right after the 10-byte header: 0xff starts a
# block of the reserved type 3, so inflate fails on the first byte.
corrupt = gz.byteslice(0, 10) + "\xff\xff\xff\xff".b + gz.byteslice(14..-1)
write("bad_gzip_corrupt.json.gz", corrupt,
      "objects" => 0, "roots" => 0, "bad_lines" => 1, "first_bad_line" => 1,
      "why" => "gzip header is fine but the deflate data is corrupt from its first byte: nothing can be read; report the gzip error")

big = (BASE + BASE.drop(2).map { |l| l.gsub("0x7f3a5c01", "0x7f3a5c02") }).join
gzb = gzip(big)
cutb = gzb.byteslice(0, gzb.bytesize * 6 / 10)
z = Zlib::Inflate.new(-Zlib::MAX_WBITS)
prefix = z.inflate(cutb.byteslice(10..-1))
plines = prefix.split("\n", -1)
partial = plines.pop
complete = plines
raise "cut must fall inside a line" if partial.empty? || partial.end_with?("}")
raise "cut must fall after the ROOT lines" if complete.size < 3
write("bad_gzip_truncated.json.gz", cutb,
      "objects" => complete.size - 2, "bad_lines" => 1, "first_bad_line" => complete.size + 1,
      "truncated" => 1,
      "why" => "gzip stream cut at 60% (interrupted copy): inflate what is there, #{complete.size} complete lines; the cut line #{complete.size + 1} and the gzip error are one reported problem")

# --------------------------------------------------------------- edge_ ---

write("edge_empty.json", "",
      "objects" => 0, "roots" => 0, "exit" => 1,
      "why" => "empty file (a crash before the first flush; since: newer than every object with shapes: false): no record, so not a heap dump: exit 1, lenient and strict, so that a failed dump never reads as 'no leak'")

write("edge_crlf.json", BASE.map { |l| l.sub(/\n\z/, "\r\n") }.join,
      "why" => "CRLF line ends (Windows text mode, files edited in transit): drop the \\r")

write("edge_invalid_utf8.json",
      base_with(L_PAYLOAD => BASE[L_PAYLOAD - 1].sub('"value":"payload 1"', "\"value\":\"pay\xff\xfeload\"".b)
                                                .sub('"file":"app.rb"', "\"file\":\"caf\xe9.rb\"".b)),
      "why" => "invalid UTF-8 inside string values (raw 0xff 0xfe in value as in reap#7; Latin-1 byte in file): valid JSON syntax, keep bytes as they are")

dup_line = BASE[L_PAYLOAD - 1]
dup_other = '{"address":"0x7f3a5c012408", "type":"ARRAY", "class":"0x7f3a5c0ff0a0", "length":1, "embedded":true, "references":["0x7f3a5c0123b8"], "memsize":40}' + "\n"
write("edge_duplicate_address.json", (BASE + [dup_line, dup_other]).join,
      "duplicates" => 2,
      "why" => "the same address twice (concatenated dumps; a second, different record): keep the first record of an address, count the rest as duplicates")

dangling = BASE.dup
dangling[0] = '{"type":"ROOT", "root":"vm", "references":["0x7f3a5c012340", "0x7f3a5c012368", "0x7f3a5c0fff00"]}' + "\n"
dangling[L_OBJECT - 1] = BASE[L_OBJECT - 1].sub('"references":["0x7f3a5c012458", "0x7f3a5c012480"]',
                                                '"references":["0x7f3a5c012458", "0x7f3a5c012480", "0x7f3a5c0fff28", "0x7f3a5c0fff28"]')
write("edge_dangling_refs.json", dangling.join,
      "roots" => BASE_ROOTS + 1, "dangling" => 3,
      "why" => "references to addresses with no record (since: dumps, races): 1 from a ROOT, 2 (one address twice) from an object; keep them as external")

unknown = BASE.dup
unknown[4] = BASE[4].sub(', "memsize":160', ', "free_immediately":false, "complex_shape":true, "future":{"list":[1, {"x":null}, "s"], "n":-1.5e3}, "memsize":160')
unknown.insert(12, '{"address":"0x7f3a5c0124d0", "type":"UNKNOWN", "class":"0x7f3a5c0ff0f0", "memsize":40}' + "\n")
unknown.insert(13, '{"address":"0x7f3a5c0124f8", "type":"WIDGET", "shape_id":7, "slot_size":40, "gizmo":{"a":{"b":{"c":[[],{}]}}}, "references":["0x7f3a5c0124d0"], "memsize":80}' + "\n")
unknown.insert(2, '{"type":"ROOT", "root":"ZJIT", "references":["0x7f3a5c0124f8"]}' + "\n")
write("edge_unknown_fields_types.json", unknown.join,
      "objects" => BASE_OBJECTS + 2, "roots" => BASE_ROOTS + 1,
      "why" => "unknown keys (nested objects/arrays, null, float) to skip, unknown object types UNKNOWN and WIDGET (objects), a new ROOT category")

flags40 = BASE.each_with_index.map do |l, i|
  next l if i < 2
  l = l.sub(/"type":"(\w+)", /) { "\"type\":\"#{$1}\", \"shape_id\":0, \"slot_size\":40, " }
  l.sub(/"flags":\{([^}]*)\}/) do
    f = $1.split(", ")
    f.insert(1, "\"age\":#{i % 4}")
    f << "\"object_id\":#{i * 8}" if i.even?
    f << "\"shareable\":true" if l.include?('"frozen":true')
    "\"flags\":{#{f.join(", ")}}"
  end
end
write("edge_flags_integer.json", flags40.join,
      "why" => "Ruby 4.0 flags hold integers (age 0-3, object_id) beside true; parse flag values as generic scalars")

upper = BASE.map do |l|
  l.gsub(/"0x(\h+)"/) { "\"#{$1.upcase.rjust(16, "0")}\"" }
end
write("edge_uppercase_addresses.json", upper.join,
      "why" => "Ruby 2.1-2.5 on Windows (%p in msvcrt): addresses uppercase, zero-padded, no 0x; the same addresses as hex numbers, so references resolve")

framed = BASE.each_with_index.map { |l, i| (i.zero? ? "[" : ",") + l }.join + "]\n"
write("edge_heap_dump_framing.json", framed,
      "why" => "records framed as one JSON array, one element a line, as the heap_dump gem writes: first line '[' + record, then ',' + record, last line ']'; strip the framing")

# memprof (Ruby 1.8) Memprof.dump_all: compact, one record a line. Objects are
# the records whose type is a heap type; finalizers, globals, frame, lsof and
# ps records are not objects. No "references": edges come from pointer values.
memprof = <<~NDJSON
  {"_id":"finalizers","type":"finalizers","data":[]}
  {"_id":"globals","type":"globals","variables":{":$stdout":"0x1c0d2a8",":$0":"0x1c0d1e0",":$DEBUG":false,":$VERBOSE":false}}
  {"_id":"0x7fff5fbff5c0","type":"frame","self":"0x1c32f80","last_class":"0x1c33110","orig_func":":require","last_func":":require","node":"0x1c5d930","prev":"0x7fff5fbff7a0","tmp":null}
  {"_id":"0x1c0d2a8","type":"file","class":"0x1c33048","class_name":"IO","fileno":1,"fileno2":null,"pid":null,"path":"<STDOUT>","mode":["writable","sync"],"code":14}
  {"_id":"0x1c0d1e0","file":"app.rb","line":1,"time":1276551120101010,"type":"string","class":"0x1c330c0","class_name":"String","length":6,"data":"app.rb","code":7}
  {"_id":"0x1c5a0f0","file":"app.rb","line":4,"time":1276551120102020,"type":"array","class":"0x1c33070","class_name":"Array","length":3,"data":[1,":sym","0x1c0d1e0"],"code":9}
  {"_id":"0x1c5a118","file":"app.rb","line":5,"time":1276551120103030,"type":"hash","class":"0x1c33098","class_name":"Hash","length":1,"default":null,"data":[[":key","0x1c5a0f0"]],"code":11}
  {"_id":"0x1c5a140","type":"object","class":"0x1c5b000","class_name":"Request","ivars":{"@body":"0x1c5a168","@id":42},"code":2}
  {"_id":"0x1c5a168","type":"string","class":"0x1c330c0","class_name":"String","length":5,"data":"caf\xe9!","code":7}
  {"_id":"0x1c5b000","type":"class","name":"Request","super":"0x1c330e8","super_name":"Object","singleton":false,"ivars":{},"methods":{"initialize":"0x1c5d958"},"code":3}
  {"_id":"0x1c5a190","type":"float","class":"0x1c33138","class_name":"Float","data":3.14,"code":6}
  {"_id":"0x1c5a1b8","type":"node","node_type":"SCOPE","file":"app.rb","line":7,"node_code":2,"n1":null,"n2":"0x1c5d980","n3":null,"code":63}
  {"_id":"lsof:1","type":"lsof","fd":"1","fd_type":"CHR","fd_name":"/dev/pts/0"}
  {"_id":"ps","type":"ps","rss":10240,"vsize":2453660}
NDJSON
write("edge_memprof.json", memprof.b,
      "objects" => 9, "roots" => 0, "format" => "memprof",
      "why" => "memprof (Ruby 1.8) dump_all: _id not address, lowercase types, no references (edges from pointer values), globals/frame/finalizers/lsof/ps records are not objects; 9 heap records")

puts "#{$written.size} files in #{OUT}: #{$written.join(" ")}"
