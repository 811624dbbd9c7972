# frozen_string_literal: true

# gate_lazy.rb - the library gate_blocks.rb's lazy_require block loads on
# its first run: a module and its tables, then nothing more.
module GateLazy
  NAMES = (1..200).map { |i| "name #{i}" }.freeze
  def self.lookup(i) = NAMES[i % NAMES.size]
end
