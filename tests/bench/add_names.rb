# tests/bench/add_names.rb - adds a plausible "ref_names" to every record of
# a dump_all dump: a stand-in for a HeapDump.dump(names: true) dump of the
# same heap, to measure what names cost (tests/cli/names_store.sh).
#
#   ruby tests/bench/add_names.rb IN.json > OUT.json
require 'json'
ARGF.each_line do |l|
  r = JSON.parse(l) rescue (print l; next)
  refs = r['references']
  if refs && !refs.empty?
    names = refs.each_with_index.map do |_, k|
      case r['type']
      when 'OBJECT' then "@ivar#{k % 12}"
      when 'ARRAY' then k
      when 'HASH' then k.even? ? "[:key#{(k / 2) % 40}]" : "[value]"
      when 'CLASS', 'MODULE' then k.zero? ? '(superclass)' : "::CONST#{k % 30}"
      when 'STRUCT' then ".member#{k % 5}"
      when 'ROOT' then nil
      else nil
      end
    end
    r['ref_names'] = names unless names.all?(&:nil?)
  end
  puts JSON.generate(r)
end
