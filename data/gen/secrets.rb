# secrets.rb - a small leaking program whose heap is full of planted
# secrets, for the redaction tests (tests/cli/redact.sh): every secret
# holds a marker (SECRET_* below) that must not survive `heapdump
# redact --all` anywhere in the output.
#
#   ruby --disable-gems data/gen/secrets.rb OUTDIR
#
# Writes OUTDIR/secrets_{before,after,later}.json: the heap before the
# leak, after it, and later (the leak still held, more of it), with
# allocation tracing, by the heapdump gem with reference names when
# DUMPER=heapdump (the gem on $LOAD_PATH), else by ObjectSpace.dump_all;
# and OUTDIR/secrets_expected.json: the markers, and the address of the
# leak's holder (SecretVault::STORE, a Hash) in LATER.
#
# Where the markers are:
#   SECRETVALUE   string contents (tokens, passwords), the leak itself
#   SECRETKEY     String keys of the holder Hash (ref names ["..."])
#   SECRETSYM     a Symbol key ([:...]) and a Symbol
#   SECRETIVAR    an instance variable (@...)
#   SECRETCONST   a constant (::...)
#   SECRETGLOBAL  a global variable ($...)
#   SECRETLOCAL   a local captured by a lambda (secretlocal_: the
#                 markers are matched without regard to case)
#   SECRETPATH    the file the leak's objects are allocated in (eval)
#   SECRETMETHOD  the method that allocates them
#   SECRETCLASS   a named class, and on 3.3+ a temporary name
#                 (Module#set_temporary_name)
#   SECRETBYTES   a file name of invalid UTF-8, a control byte and quotes
#                 (which dump_all writes raw: an invalid line)
require "objspace"
require "json"
HEAPDUMP = ENV["DUMPER"] == "heapdump"
if HEAPDUMP
  require "heapdump"
  HeapDump.trace_allocations_start
else
  ObjectSpace.trace_object_allocations_start
end

dir = ARGV.fetch(0)

class SECRETCLASSNamed
  def initialize(token)
    @SECRETIVAR_token = token
  end
end

module SecretVault
  STORE = {}
end
SECRETCONST_TABLE = ["SECRETVALUE-const-element-0000"]
$SECRETGLOBAL_var = "SECRETVALUE-global-0000000000"
SYMS = { SECRETSYM_key: "SECRETVALUE-symbol-valued-000" }
INVALID = "\xff\xfeSECRETVALUE-invalid-utf8\xff".b.force_encoding("UTF-8")
# invalid UTF-8 where the dumpers write bytes raw: a file name
RAW = eval('["SECRETVALUE-from-a-raw-file-00"]', binding,
           "/tmp/SECRETBYTES-\xff\xfe\x01-\"quoted\".rb".b, 1)
# (a class held by no constant, else its name is permanent)
TEMP_OBJ = Class.new.tap do |c|
  c.set_temporary_name("fake<SECRETCLASS-temporary>") if c.respond_to?(:set_temporary_name)
end.new

def make_closure
  secretlocal_captured = "SECRETVALUE-captured-local-0000"
  -> { secretlocal_captured }
end
HOLD = make_closure

# The leak: a method of a file named with a secret, allocating
# SECRETCLASSNamed objects holding secret tokens under secret keys.
SRC = <<~RUBY
  def SECRETMETHOD_fill(from, n)
    n.times do |i|
      k = "SECRETKEY-" + format("%06d", from + i)
      SecretVault::STORE[k] = SECRETCLASSNamed.new("SECRETVALUE-token-" + format("%012d", from + i) + "x" * 40)
    end
  end
RUBY
eval(SRC, binding, "/home/SECRETPATH-user/app/vault.rb", 1)

def addr(obj)
  format("0x%x", ObjectSpace.dump(obj)[/"address":"0x(\h+)"/, 1].to_i(16))
end

def dump(path)
  GC.start
  if HEAPDUMP
    HeapDump.dump(path, names: true)
  else
    File.open(path, "w") { |f| ObjectSpace.dump_all(output: f) }
  end
end

dump(File.join(dir, "secrets_before.json"))
SECRETMETHOD_fill(0, 300)
dump(File.join(dir, "secrets_after.json"))
SECRETMETHOD_fill(300, 300)
dump(File.join(dir, "secrets_later.json"))
File.write(File.join(dir, "secrets_expected.json"), JSON.generate(
  "holder" => addr(SecretVault::STORE),
  "temporary_name" => Class.respond_to?(:set_temporary_name) || Module.method_defined?(:set_temporary_name),
  "markers" => %w[SECRETVALUE SECRETKEY SECRETSYM SECRETIVAR SECRETCONST
                  SECRETGLOBAL SECRETLOCAL SECRETPATH SECRETMETHOD
                  SECRETCLASS SECRETBYTES]
))
