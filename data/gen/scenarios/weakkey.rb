# weakkey.rb - issue 34, item 12: a parser memoizes parsed documents in
# an ObjectSpace::WeakKeyMap keyed by the source document (Ruby 3.3+; an
# ObjectSpace::WeakMap before), so that a memo entry goes when its
# document goes. But the documents themselves are kept by a real
# registry, DocumentStore @documents, that never forgets one: the memo's
# values live only because their keys do, and the registry is what
# holds them both.
#
#   ruby weakkey.rb gem|dump_all OUTDIR      (see harness.rb)
#
# Truth: the documents of phase A and their strings, measured as they
# are made, and their memoized parses (ParsedDocument, its Arrays and
# strings) when they are still alive at the end: a WeakKeyMap keeps a
# value while its key lives; a WeakMap (Ruby 3.1, 3.2) holds its values
# weakly too, so there the parses go at the next GC and only the
# documents leak (the program counts the live ParsedDocuments to know).
# Holder: DocumentStore @documents (never the memo).

require_relative "harness"

MemoMap = defined?(ObjectSpace::WeakKeyMap) ? ObjectSpace::WeakKeyMap : ObjectSpace::WeakMap

class Document
  attr_reader :name, :text

  def initialize(name, text)
    @name = name
    @text = text.freeze # a document does not change (and its parse's substrings share it)
  end
end

class ParsedDocument
  attr_reader :headings, :words

  def initialize(doc)
    @headings = doc.text.lines.grep(/^#/).map(&:strip)
    @words = doc.text.split.first(8).map(&:downcase)
  end

  def owned = [self, @headings, *@headings, @words, *@words]
end

class Parser
  def initialize
    @memo = MemoMap.new
  end

  def parse(doc)
    @memo[doc] ||= ParsedDocument.new(doc)
  end
end

class DocumentStore
  def initialize
    @documents = []
  end

  def add(doc) = @documents << doc # the leak: documents are never evicted
end

STORE = DocumentStore.new
PARSER = Parser.new

$docs = [0, 0]
$parses = [0, 0]

def upload(id, counting)
  text = "# Report #{id}\nQuarterly figures for branch #{id % 17}.\n## Summary\n" + "Revenue grew again. " * 10
  doc = Document.new("report-#{id}.md", text)
  STORE.add(doc)
  parsed = PARSER.parse(doc)
  return unless counting
  n, bytes = Scenario.measure([doc, doc.name, doc.text])
  $docs[0] += n
  $docs[1] += bytes
  n, bytes = Scenario.measure(parsed.owned)
  $parses[0] += n
  $parses[1] += bytes
end

(0...40).each { |id| upload(id, false) }
Scenario.dump("before")
(40...440).each { |id| upload(id, true) }
Scenario.dump("after")
(440...840).each { |id| upload(id, false) }
Scenario.dump("later")

GC.start
parses_alive = ObjectSpace.each_object(ParsedDocument).count
kept = parses_alive == 840 # every parse alive: the memo keeps values while their keys live
objects = $docs[0] + (kept ? $parses[0] : 0)
bytes = $docs[1] + (kept ? $parses[1] : 0)
Scenario.truth(leaks: true, holder_gem: ["@documents"], holder_dump_all: ["DocumentStore"],
               not_holder_gem: ["@memo", "WeakKeyMap", "WeakMap"], not_holder_dump_all: ["Parser", "WeakKeyMap", "WeakMap"],
               objects: objects, bytes: bytes,
               note: "400 documents of phase A#{kept ? " and their memoized parses (#{MemoMap})" : " (#{MemoMap}: #{parses_alive} parses alive of 840, not counted)"}")
