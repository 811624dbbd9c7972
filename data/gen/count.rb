# count.rb - an independent counter for ObjectSpace.dump_all dumps, written
# with Ruby's JSON library. Tests compare heapdump's numbers with its output.
#
#   ruby count.rb DUMP[.gz]      # prints one JSON document on stdout
#
# The reading rules (the "tolerant reader" the .expect files describe):
#  * The input is split on "\n"; one "\r" before it is dropped. Blank lines
#    are ignored.
#  * heap_dump framing: a line that is just "[" or "]" is ignored, and one
#    leading "[" or "," before "{" is dropped.
#  * Every other line must hold one JSON object. If JSON.parse fails:
#    - a line ending in "}" is repaired with regexes (address, type, root,
#      references, memsize, generation), as for a raw quote in "file";
#    - a line that does not end in "}", or has an odd number of unescaped
#      quotes (a string left open), is joined with the next line when that
#      one does not start a record, i.e. does not begin with '{"name":' (a raw
#      newline inside "file", or Ruby 3.1.2's escape garbage holding a
#      newline before '{"\u00ff'), and retried;
#    - the cut last line of an incomplete dump (no final newline, or a
#      damaged gzip stream) is repaired with the same regexes;
#    - anything else is skipped.
#    Each repaired or skipped record counts once in bad_lines, at its first
#    physical line (first_bad_line, 1-based; 0 when there is none).
#  * Objects: records with an "address" whose type is not SHAPE; only the
#    first record of an address counts (later ones count in duplicates).
#    Addresses are compared as hex numbers ("0x7F0A", "7f0a" are the same).
#  * A .gz file is inflated as far as the data allows; a damaged or cut
#    stream sets gzip_error and counts as one bad line: the cut last line
#    when the data ends in one, else one more line after the last.
#
# Output keys:
#   objects shapes roots root_categories edges memsize by_type bad_lines
#   generations        as described in data/README.md
#   first_bad_line duplicates dangling others truncated gzip_error
#     dangling: references (of objects and ROOTs) to no object in the file
#     others:   always 0: a record that is neither object (it has an
#               address), SHAPE nor ROOT counts as a bad line
#     truncated: the data does not end with "\n"

require "json"
require "zlib"

def inflate_gzip(data)
  flags = data.getbyte(3)
  pos = 10
  if flags & 4 != 0
    xlen = data.byteslice(pos, 2).unpack1("v")
    pos += 2 + xlen
  end
  pos = data.index("\0".b, pos) + 1 if flags & 8 != 0
  pos = data.index("\0".b, pos) + 1 if flags & 16 != 0
  pos += 2 if flags & 2 != 0
  z = Zlib::Inflate.new(-Zlib::MAX_WBITS)
  out = "".b
  error = nil
  body = data.byteslice(pos..-1)
  begin
    (0...body.bytesize).step(4096) { |i| out << z.inflate(body.byteslice(i, 4096)) }
    error = "unexpected end of gzip data" unless z.finished?
    trailer = z.finished? ? body.byteslice(z.total_in, 8) : nil
    if trailer && trailer.bytesize == 8
      crc, size = trailer.unpack("VV")
      error = "gzip CRC mismatch" if crc != Zlib.crc32(out) || size != (out.bytesize & 0xffffffff)
    elsif trailer
      error = "gzip trailer missing"
    end
  rescue Zlib::Error => e
    error = "gzip: #{e.message}"
  end
  [out, error]
end

def norm(addr)
  return nil unless addr.is_a?(String)
  hex = addr.strip.downcase.sub(/\A0x/, "")
  hex =~ /\A\h+\z/ ? hex.sub(/\A0+(?=.)/, "") : nil
end

# Fallback for a line JSON.parse refuses. Leading fields (address, type,
# root, references) are taken from their first match; trailing ones
# (generation, memsize) from their last, past any junk in between.
def repair(line)
  type = line[/"type":"([^"]*)"/, 1]
  address = line[/"address":"([^"]*)"/, 1]
  return nil unless type || address
  rec = { "type" => type }
  rec["address"] = address if address
  rec["root"] = line[/"root":"([^"]*)"/, 1] if type == "ROOT"
  if (refs = line[/"references":\[([^\]]*)\]/, 1])
    rec["references"] = refs.scan(/"([^"]*)"/).flatten
  end
  if (m = line.scan(/"memsize":(\d+)/).last)
    rec["memsize"] = m[0].to_i
  end
  if (g = line.scan(/"generation":(\d+)/).last)
    rec["generation"] = g[0].to_i
  end
  rec
end

def parse(line)
  rec = JSON.parse(line)
  rec.is_a?(Hash) ? [rec, false] : [nil, true]
rescue JSON::ParserError, EncodingError
  line.end_with?("}") ? [repair(line), true] : [nil, true]
end

path = ARGV[0] or abort "usage: ruby count.rb DUMP[.gz]"
data = File.binread(path)
gzip_error = nil
data, gzip_error = inflate_gzip(data) if data.start_with?("\x1f\x8b".b)
data.force_encoding(Encoding::BINARY)     # bytes: values need not be UTF-8

lines = data.split("\n", -1)
truncated = !data.empty? && !data.end_with?("\n")
lines.pop if lines.last == ""

st = { objects: 0, shapes: 0, roots: 0, edges: 0, memsize: 0, bad_lines: 0,
       first_bad_line: 0, duplicates: 0, others: 0 }
categories = {}
by_type = Hash.new { |h, k| h[k] = { "count" => 0, "memsize" => 0 } }
seen = {}
refs_all = []
gens = []

bad = lambda do |lineno|
  st[:bad_lines] += 1
  st[:first_bad_line] = lineno if st[:first_bad_line].zero?
end

i = 0
while i < lines.size
  lineno = i + 1
  line = lines[i].chomp("\r")
  i += 1
  next if line.strip.empty? || line == "[" || line == "]"
  line = line[1..-1] if line.start_with?("[{", ",{")
  rec, was_bad = parse(line)
  # an unbalanced quote or a missing "}" means the record goes on
  while was_bad && (line.b.gsub(/\\./mn, "").count('"').odd? || !line.end_with?("}")) &&
        i < lines.size && lines[i] !~ /\A\s*(\{"[a-z_]*":|\[|,)/
    line = line + "\n" + lines[i].chomp("\r")
    i += 1
    rec, was_bad = parse(line)
  end
  # the cut last line of an incomplete dump still gives address and type
  rec = repair(line) if was_bad && rec.nil? && i == lines.size && (truncated || gzip_error)
  bad.call(lineno) if was_bad
  next unless rec

  refs = rec["references"].is_a?(Array) ? rec["references"] : []
  if rec["type"] == "ROOT"
    st[:roots] += refs.size
    categories[rec["root"]] = true
    refs_all.concat(refs)
  elsif rec["type"] == "SHAPE"
    st[:shapes] += 1
  elsif rec.key?("address")
    key = norm(rec["address"]) || rec["address"]
    if seen[key]
      st[:duplicates] += 1
      next
    end
    seen[key] = true
    st[:objects] += 1
    st[:edges] += refs.size
    refs_all.concat(refs)
    mem = rec["memsize"].is_a?(Integer) ? rec["memsize"] : 0
    st[:memsize] += mem
    t = by_type[rec["type"].to_s]
    t["count"] += 1
    t["memsize"] += mem
    gens << rec["generation"] if rec["generation"].is_a?(Integer)
  else
    # a record without an address is no heap object: reported, skipped
    bad.call(lineno) unless was_bad
  end
end
# A damaged gzip stream is reported once: by the cut last line if the data
# ends in one, else as an extra line after the last.
bad.call(lines.size + 1) if gzip_error && !truncated

out = {
  "objects" => st[:objects],
  "shapes" => st[:shapes],
  "roots" => st[:roots],
  "root_categories" => categories.size,
  "edges" => st[:edges],
  "memsize" => st[:memsize],
  "by_type" => by_type.sort.to_h,
  "bad_lines" => st[:bad_lines],
  "generations" => gens.empty? ? nil : gens.minmax,
  "first_bad_line" => st[:first_bad_line],
  "duplicates" => st[:duplicates],
  "dangling" => refs_all.count { |r| !seen[norm(r) || r] },
  "others" => st[:others],
  "truncated" => truncated,
  "gzip_error" => gzip_error,
}
puts JSON.generate(out)
