// run_wasm.mjs - run a fixture script under a ruby.wasm build and write the
// heap dump(s) it produces.
//
//   node run_wasm.mjs VERSION SCRIPT OUT [NAME=VALUE ...]
//
// VERSION  3.2 | 3.3 | 3.4 | 4.0   (package @ruby/VERSION-wasm-wasi)
// SCRIPT   scenario.rb or leak.rb
// OUT      a file (scenario.rb) or an existing directory (leak.rb)
// NAME=VALUE pairs become the guest's ENV (TRACE=1, SINCE=1, CLEAN=1, ...).
//
// OUT a file: the dump travels as a string: the script leaves
// [dump].pack("m0") in $heapdump_result and we write the decoded bytes.
// OUT a directory: an in-memory directory is mapped into the guest as /out
// and ENV["HEAPDUMP_OUT"] is set to "/out"; the script writes its files there
// and we copy them out afterwards. leak.rb needs this: it writes three dumps
// from one process, and a dump carried back as a string would still be
// alive, as a 2 MB String, in the next dump.
//
// This is DefaultRubyVM from @ruby/wasm-wasi/dist/node with two changes:
// 1. Ruby starts with --disable-gems. With RubyGems loaded an idle heap dump
//    is 4.3-6.8 MB; without it 1.5-2 MB, which keeps the fixtures small.
// 2. WASI comes from @bjorn3/browser_wasi_shim (the in-browser WASI that
//    @ruby/wasm-wasi itself depends on), not node:wasi. Under node 20's WASI
//    a few hundred fd_write calls to a mapped host directory (one 2 MB dump
//    through a File) corrupt node's heap: node segfaults or aborts in V8's
//    GC shortly after.

import fs from "node:fs";
import path from "node:path";
import { WASI, File, OpenFile, PreopenDirectory, ConsoleStdout } from "@bjorn3/browser_wasi_shim";
import { fileURLToPath } from "node:url";
import { RubyVM } from "@ruby/wasm-wasi";

const here = path.dirname(fileURLToPath(import.meta.url));

function usage() {
  console.error("usage: node run_wasm.mjs VERSION SCRIPT OUT [NAME=VALUE ...]");
  process.exit(2);
}

const [version, script, out, ...pairs] = process.argv.slice(2);
if (!version || !script || !out) usage();
const env = {};
for (const p of pairs) {
  const eq = p.indexOf("=");
  if (eq <= 0) usage();
  env[p.slice(0, eq)] = p.slice(eq + 1);
}

const wasmPath = path.join(here, "node_modules", "@ruby", `${version}-wasm-wasi`,
  "dist", "ruby+stdlib.wasm");
const module = await WebAssembly.compile(fs.readFileSync(wasmPath));
const toDir = fs.existsSync(out) && fs.statSync(out).isDirectory();
const outDir = new PreopenDirectory("/out", new Map());
if (toDir) env.HEAPDUMP_OUT = "/out";
const fds = [
  new OpenFile(new File([])),
  ConsoleStdout.lineBuffered((line) => console.log(`[ruby] ${line}`)),
  ConsoleStdout.lineBuffered((line) => console.error(`[ruby] ${line}`)),
  outDir,
];
const wasi = new WASI(["ruby.wasm"], Object.entries(env).map(([k, v]) => `${k}=${v}`), fds,
  { debug: false });
const { vm } = await RubyVM.instantiateModule({
  module,
  wasip1: wasi,
  args: ["ruby.wasm", "--disable-gems", "-EUTF-8", "-e_=0"],
});

// Eval the script text under its own file name, so that traced objects say
// "file":"scenario.rb" exactly as with the native ruby run from data/gen.
// A quoted heredoc passes the text through byte for byte.
const name = path.basename(script);
const text = fs.readFileSync(path.resolve(script), "utf8");
const tag = "__HEAPDUMP_SCRIPT_END__";
if (text.includes(tag)) throw new Error(`${script} contains ${tag}`);
vm.eval(`eval(<<'${tag}', TOPLEVEL_BINDING, ${JSON.stringify(name)}, 1)\n${text}\n${tag}\n`);

function report(file, bytes) {
  const lines = bytes.reduce((n, b) => n + (b === 10 ? 1 : 0), 0);
  console.log(`${file}: ${bytes.length} bytes, ${lines} lines (ruby ${version} wasm)`);
}

if (toDir) {
  for (const [fname, entry] of [...outDir.dir.contents.entries()].sort()) {
    const file = path.join(out, fname);
    fs.writeFileSync(file, entry.data);
    report(file, entry.data);
  }
} else {
  const b64 = vm.eval("$heapdump_result").toString();
  const bytes = Buffer.from(b64, "base64");
  fs.writeFileSync(out, bytes);
  report(out, bytes);
}
