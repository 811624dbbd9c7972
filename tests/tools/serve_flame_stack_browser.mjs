// serve_flame_stack_browser.mjs - drives Debian's headless chromium
// (puppeteer-core) through heapdump serve's flame graph by allocation
// stack, for tests/cli/serve_flame.sh, on a dump traced with stacks: from
// the flame view, the link to the stack view and the one to count
// objects; the root's total; the widest frame named after the leaking
// caller (EXPECT's frame) with EXPECT's total (heapdump flame's folded
// count under that stack); a click on it lists as many objects as its
// count, each a link; no page error, no request off the server. Prints
// "ok - serve_flame/stack-browser/NAME" or "not ok - ..." lines; the
// view zoomed into EXPECT's zoom frame, down to the icicle's bottom, goes
// to SHOTS/flame-stack.png (data/serve-flame.png is one).
//
//   node serve_flame_stack_browser.mjs URL EXPECT.json SHOTS
import { openPage } from './browser.mjs';
import { readFileSync } from 'node:fs';

const [url, expectFile, shots] = process.argv.slice(2);
const expect = JSON.parse(readFileSync(expectFile, 'utf8'));
let failed = 0;
function check(name, cond, why) {
  if (cond) console.log(`ok - serve_flame/stack-browser/${name}`);
  else { failed++; console.log(`not ok - serve_flame/stack-browser/${name}: ${why}`); }
}

const { browser, page, errors, offsite } = await openPage(url);
async function view(name) {
  await page.waitForFunction(n => document.body.getAttribute('data-view') === n || document.body.getAttribute('data-view') === 'error', { timeout: 30000 }, name);
  const v = await page.evaluate(() => document.body.getAttribute('data-view'));
  if (v === 'error') throw new Error(await page.$eval('#error', e => e.textContent));
}
// the view after a click that changes the address: data-view cleared
// first, so that the one waited for is the new view's, not the last
async function follow(sel) {
  await page.evaluate(() => document.body.setAttribute('data-view', ''));
  await page.click(sel);
  await view('/flame');
}
async function frames() {
  return page.$$eval('#flame g.fl-frame', gs => gs.map(g => ({
    id: g.getAttribute('data-id'), total: Number(g.getAttribute('data-total')),
    depth: Number(g.getAttribute('data-depth')),
    width: Number(g.querySelector('rect').getAttribute('width')),
    title: g.querySelector('title').textContent })));
}
const named = (fs, name) => fs.filter(f => f.title.startsWith(name + ' ')).sort((a, b) => b.total - a.total || a.depth - b.depth);

try {
  await page.goto(url, { waitUntil: 'load' });
  await view('/overview');
  await page.click('#nav-flame');
  await view('/flame');
  await follow('#fl-by-stack');
  const h1 = await page.$eval('main h1', e => e.textContent);
  check('stack-view', h1.includes('allocation stacks') && (await page.evaluate(() => location.hash)).includes('by=stack'), `title '${h1}'`);
  await follow('#fl-count');
  const all = await frames();
  const root = all.filter(f => f.depth === 0);
  check('root-total', root.length === 1 && root[0].total === expect.total, `root ${JSON.stringify(root)} vs ${expect.total}`);
  const keep = named(all, expect.frame);
  check('leaking-caller', keep.length > 0 && keep[0].total === expect.frame_total,
    `frames named ${expect.frame}: ${JSON.stringify(keep.slice(0, 3))}, expected total ${expect.frame_total}`);
  // the screenshot: zoomed into the program's own frames
  const zoom = named(all, expect.zoom);
  if (zoom.length) {
    await follow(`#flame g.fl-frame[data-id="${zoom[0].id}"] rect`);
    const bottom = await page.$eval('#flame', e => e.getBoundingClientRect().bottom);
    await page.screenshot({ path: shots + '/flame-stack.png', clip: { x: 0, y: 0, width: 1200, height: Math.min(900, Math.ceil(bottom + 16)) } });
    await page.evaluate(() => document.body.setAttribute('data-view', ''));
    await page.goBack();
    await view('/flame');
  } else check('zoom-frame', false, `no frame named ${expect.zoom}`);
  const again = named(await frames(), expect.frame);
  await follow(`#flame g.fl-frame[data-id="${again[0].id}"] rect`);
  const crumb = await page.$eval('#fl-crumbs strong', e => e.textContent).catch(() => '');
  check('zoom-crumb', crumb === expect.frame, `crumb '${crumb}'`);
  await page.waitForSelector('#fl-objects-count', { timeout: 30000 });
  const count = await page.$eval('#fl-objects-count', e => Number(e.getAttribute('data-count')));
  const links = await page.$$eval('#fl-objects li a', as => as.map(a => a.getAttribute('href')));
  check('objects-count', count === expect.frame_total && links.length === Math.min(count, 500),
    `${count} objects, ${links.length} links, expected ${expect.frame_total}`);
  await page.click('#fl-objects li a');
  await view('/object');
  const shown = await page.evaluate(() => location.hash + ' ' + document.querySelector('main').textContent.slice(0, 200));
  check('object-page', links.length > 0 && shown.includes('0x'), `object page: ${shown.slice(0, 120)}`);
} catch (e) {
  check('run', false, String(e).slice(0, 300));
}
check('no-page-errors', errors.length === 0, errors.join(' | ').slice(0, 300));
check('no-offsite-requests', offsite.length === 0, offsite.join(' ').slice(0, 300));
await browser.close();
process.exit(failed ? 1 : 0);
