// tests/tools/flame_import.mjs - heapdump flame's outputs read back by
// other people's readers (tests/cli/flame.sh):
//
//   node flame_import.mjs speedscope FILE   speedscope's own importer
//   node flame_import.mjs pprof FILE        npm pprof-format's decoder
//
// speedscope: its release bundle (npm speedscope, pinned in
// tests/package.json) is a browser script; it is run in a vm context
// with a stub document (the UI it starts fails there, and is not used),
// and its lazily loaded import module (the one that exports
// importProfileGroupFromText, the function speedscope's file picker
// calls) is taken as the bundle creates it. Prints one JSON line: the
// profile's name, unit, total weight, and the total of each outermost
// frame of its call tree. Exit 1 when speedscope imports nothing.
//
// pprof: gunzips and decodes FILE, prints the sample type and unit on
// the first line, then one folded line per sample ("a;b;c VALUE",
// outermost frame first).
import fs from 'node:fs'
import path from 'node:path'
import vm from 'node:vm'
import zlib from 'node:zlib'
import { fileURLToPath } from 'node:url'

const here = path.dirname(fileURLToPath(import.meta.url))
const modules = path.join(here, '..', 'node_modules')
const [kind, file] = process.argv.slice(2)

async function speedscope() {
  const dir = path.join(modules, 'speedscope', 'dist', 'release')
  const js = fs.readdirSync(dir).find(f => /^speedscope-.*\.js$/.test(f))
  let src = fs.readFileSync(path.join(dir, js), 'utf8')
  // var X=Promise.resolve().then(()=>(init(),importModule));
  const re = /var (\w+)=Promise\.resolve\(\)\.then\(\(\)=>\(\w+\(\),\w+\)\);/
  const m = src.match(re)
  if (!m || !src.includes('importProfileGroupFromText')) {
    console.error('speedscope: the import module was not found in ' + js)
    process.exit(3)
  }
  src = src.replace(re, m[0] + 'globalThis.__importer=' + m[1] + ';')
  const noop = () => {}
  const stub = new Proxy(function () {}, {
    get: (t, k) => (k === Symbol.toPrimitive ? () => '' : stub),
    apply: () => stub,
    construct: () => stub,
    set: () => true,
  })
  const ctx = {
    console: { log: noop, warn: noop, error: console.error, info: noop },
    TextDecoder, TextEncoder, URL, setTimeout, clearTimeout, Uint8Array,
    ArrayBuffer, DataView, Promise, WebAssembly, atob, btoa,
    document: stub, navigator: { userAgent: 'node' },
    location: { href: 'file:///', protocol: 'file:', hash: '', search: '' },
    addEventListener: noop, requestAnimationFrame: noop,
    localStorage: { getItem: () => null, setItem: noop },
    matchMedia: () => ({ matches: false, addEventListener: noop, addListener: noop }),
  }
  ctx.window = ctx
  ctx.self = ctx
  vm.createContext(ctx)
  try {
    vm.runInContext(src, ctx)
  } catch (e) {
    // the application's start needs a DOM; the importer does not
  }
  const importer = await ctx.__importer
  const text = fs.readFileSync(file, 'utf8')
  const group = await importer.importProfileGroupFromText(path.basename(file), text)
  if (!group || !group.profiles.length) {
    console.error('speedscope imported nothing from ' + file)
    process.exit(1)
  }
  const p = group.profiles[group.indexToView || 0]
  const top = {}
  for (const c of p.getAppendOrderCalltreeRoot().children)
    top[c.frame.name] = (top[c.frame.name] || 0) + c.getTotalWeight()
  console.log(JSON.stringify({
    name: p.getName(), unit: p.getWeightUnit(), total: p.getTotalWeight(), top,
  }))
}

async function pprof() {
  const { Profile } = await import('pprof-format')
  const p = Profile.decode(zlib.gunzipSync(fs.readFileSync(file)))
  const str = i => p.stringTable.strings[Number(i)]
  const fn = new Map(p.function.map(f => [String(f.id), str(f.name)]))
  const loc = new Map(p.location.map(l => [String(l.id), fn.get(String(l.line[0].functionId))]))
  const out = [str(p.sampleType[0].type) + ' ' + str(p.sampleType[0].unit)]
  for (const s of p.sample)
    out.push(s.locationId.map(id => loc.get(String(id))).reverse().join(';') + ' ' + String(s.value[0]))
  process.stdout.write(out.join('\n') + '\n')
}

await (kind === 'speedscope' ? speedscope() : pprof())
