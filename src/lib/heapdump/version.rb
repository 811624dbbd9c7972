# frozen_string_literal: true

module HeapDump
  VERSION = "0.1.0"
end
