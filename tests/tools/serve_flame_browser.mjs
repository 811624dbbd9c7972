// serve_flame_browser.mjs - drives Debian's headless chromium (puppeteer-core,
// tests/package.json) through heapdump serve's flame graph, for
// tests/cli/serve_flame.sh: the icicle from the nav link, its widest
// outermost frame (name, total, width in proportion to the whole), a click
// that zooms into it (the crumbs name it, its frame spans the width), the
// way back through the crumbs; no page error, no request off the server.
// Prints "ok - serve_flame/browser/NAME" or "not ok - ..." lines; a
// screenshot goes to SHOTS/flame.png.
//
//   node serve_flame_browser.mjs URL EXPECT.json SHOTS
import { openPage } from './browser.mjs';
import { readFileSync } from 'node:fs';

const [url, expectFile, shots] = process.argv.slice(2);
const expect = JSON.parse(readFileSync(expectFile, 'utf8'));
let failed = 0;
function check(name, cond, why) {
  if (cond) console.log(`ok - serve_flame/browser/${name}`);
  else { failed++; console.log(`not ok - serve_flame/browser/${name}: ${why}`); }
}

const { browser, page, errors, offsite } = await openPage(url);
async function view(name) {
  await page.waitForFunction(n => document.body.getAttribute('data-view') === n || document.body.getAttribute('data-view') === 'error', { timeout: 30000 }, name);
  const v = await page.evaluate(() => document.body.getAttribute('data-view'));
  if (v === 'error') throw new Error(await page.$eval('#error', e => e.textContent));
}
async function frames(depth) {
  return page.$$eval(`#flame g.fl-frame[data-depth="${depth}"]`, gs => gs.map(g => ({
    id: g.getAttribute('data-id'), total: Number(g.getAttribute('data-total')),
    width: Number(g.querySelector('rect').getAttribute('width')),
    title: g.querySelector('title').textContent })));
}

try {
  await page.goto(url, { waitUntil: 'load' });
  await view('/overview');
  await page.click('#nav-flame');
  await view('/flame');
  const svgW = await page.$eval('#flame', s => Number(s.getAttribute('width')));
  const top = await frames(0);
  check('root-total', top.length === 1 && top[0].total === expect.total, `root ${JSON.stringify(top)} vs ${expect.total}`);
  const l1 = (await frames(1)).sort((a, b) => b.width - a.width);
  check('widest-frame', l1.length && l1[0].title.startsWith(expect.widest_name + ' ') && l1[0].total === expect.widest_total,
    `widest ${JSON.stringify(l1[0])}, expected ${expect.widest_name} ${expect.widest_total}`);
  const share = l1.length ? l1[0].width / svgW : 0, want = expect.widest_total / expect.total;
  check('width-in-proportion', Math.abs(share - want) < 0.01, `width share ${share}, total share ${want}`);
  await page.screenshot({ path: shots + '/flame.png' });
  await page.click(`#flame g.fl-frame[data-id="${l1[0].id}"] rect`);
  await view('/flame');
  const crumb = await page.$eval('#fl-crumbs strong', e => e.textContent).catch(() => '');
  check('zoom-crumb', crumb === expect.widest_name, `crumb '${crumb}'`);
  const z = await frames(0);
  check('zoom-root', z.length === 1 && z[0].total === expect.widest_total && Math.abs(z[0].width - (svgW - 0.5)) < 1,
    `zoomed root ${JSON.stringify(z)}`);
  await page.click('#fl-crumb-all');
  await view('/flame');
  check('back-up', (await frames(0))[0].total === expect.total, 'the crumbs did not lead back');
  // counted, a click on the widest frame lists its objects: as many as
  // its count, each a link to its object page
  await page.click('#fl-count');
  await view('/flame');
  const c1 = (await frames(1)).sort((a, b) => b.width - a.width);
  await page.click(`#flame g.fl-frame[data-id="${c1[0].id}"] rect`);
  await view('/flame');
  await page.waitForSelector('#fl-objects-count', { timeout: 30000 });
  const count = await page.$eval('#fl-objects-count', e => Number(e.getAttribute('data-count')));
  const links = await page.$$eval('#fl-objects li a', as => as.map(a => a.getAttribute('href')));
  check('objects-count', count === c1[0].total && links.length === Math.min(count, 500),
    `frame ${JSON.stringify(c1[0])}: ${count} objects, ${links.length} links`);
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
