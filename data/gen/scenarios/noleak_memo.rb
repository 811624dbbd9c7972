# noleak_memo.rb - issue 34, item 14: a program that does not leak. A
# memoized currency formatter whose memo is saturated in the warm-up:
# every (currency, amount band) pair it can see has its entry, so the
# phases only hit it, and the heap does not grow.
#
#   ruby noleak_memo.rb gem|dump_all OUTDIR      (see harness.rb)
#
# Truth: no leak.

require_relative "harness"

class PriceFormatter
  CURRENCIES = %w[EUR USD GBP CHF JPY SEK].freeze
  SYMBOLS = { "EUR" => "\u20ac", "USD" => "$", "GBP" => "\u00a3", "CHF" => "Fr.", "JPY" => "\u00a5", "SEK" => "kr" }.freeze

  def initialize
    @patterns = {}
    @calls = 0
  end

  # The pattern of a currency and an amount band (< 1k, < 1M, more):
  # 6 x 3 entries at most.
  def pattern(currency, cents)
    band = cents < 100_000 ? 0 : (cents < 100_000_000 ? 1 : 2)
    @patterns[[currency, band]] ||= begin
      sep = band.zero? ? "" : (currency == "CHF" ? "'" : ",")
      { symbol: SYMBOLS.fetch(currency), separator: sep, decimals: currency == "JPY" ? 0 : 2,
        label: "#{currency} (band #{band})" }
    end
  end

  def format(currency, cents)
    @calls += 1
    p = pattern(currency, cents)
    units = cents / 100
    digits = p[:separator].empty? ? units.to_s : units.to_s.reverse.scan(/\d{1,3}/).join(p[:separator]).reverse
    p[:decimals].zero? ? "#{p[:symbol]}#{digits}" : "#{p[:symbol]}#{digits}.#{(cents % 100).to_s.rjust(2, "0")}"
  end
end

FORMATTER = PriceFormatter.new

def invoice(id)
  currency = PriceFormatter::CURRENCIES[id % 6]
  [FORMATTER.format(currency, id * 37), FORMATTER.format(currency, id * 370_001), FORMATTER.format(currency, id * 9_000_001_000)]
    .sum(&:size)
end

(0...200).each { |id| invoice(id) } # warm-up: every pattern memoized
Scenario.dump("before")
(200...2200).each { |id| invoice(id) }
Scenario.dump("after")
(2200...4200).each { |id| invoice(id) }
Scenario.dump("later")

Scenario.truth(leaks: false, objects: 0, bytes: 0, note: "a memo of 18 formats, saturated in the warm-up")
