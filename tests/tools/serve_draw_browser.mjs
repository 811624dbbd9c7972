// serve_draw_browser.mjs - drives Debian's headless chromium (puppeteer-core,
// tests/package.json; never a downloaded browser) through heapdump serve's
// drawings, for tests/cli/serve_draw.sh: the treemap of retained size
// (its biggest rectangle, a click that zooms in, the way back up) and the
// Graphviz drawings of a leak suspect and of an object. Prints
// "ok - serve_draw/browser/NAME" or "not ok - ..." lines; screenshots go
// to SHOTS (build/serve/).
//
//   node serve_draw_browser.mjs leak URL EXPECT.json SHOTS
//   node serve_draw_browser.mjs xss URL EXPECT.json SHOTS
import { openPage } from './browser.mjs';
import { readFileSync } from 'node:fs';

const [mode, url, expectFile, shots] = process.argv.slice(2);
const expect = JSON.parse(readFileSync(expectFile, 'utf8'));
let failed = 0;
function check(name, cond, why) {
  if (cond) console.log(`ok - serve_draw/browser/${name}`);
  else { failed++; console.log(`not ok - serve_draw/browser/${name}: ${why}`); }
}

const { browser, page, errors, offsite } = await openPage(url);

async function view(name) {
  await page.waitForFunction(n => document.body.getAttribute('data-view') === n || document.body.getAttribute('data-view') === 'error', { timeout: 20000 }, name);
  const v = await page.evaluate(() => document.body.getAttribute('data-view'));
  if (v === 'error') throw new Error(await page.$eval('#error', e => e.textContent));
}
async function go(hash, name) {
  await page.evaluate(h => { document.body.setAttribute('data-view', ''); location.hash = h; }, hash);
  await view(name);
}
// the rectangles of the treemap's first level: address, retained, area
async function level1() {
  return page.$$eval('#treemap g.tm-node[data-depth="1"]', gs => gs.map(g => {
    const r = g.querySelector('rect');
    return { address: g.getAttribute('data-address'), retained: Number(g.getAttribute('data-retained')),
      area: Number(r.getAttribute('width')) * Number(r.getAttribute('height')),
      title: g.querySelector('title').textContent, text: g.querySelector('text') ? g.querySelector('text').textContent : '' };
  }));
}
// the drawing shown: its image loaded, and the objects of its map
async function graphShown() {
  await page.waitForFunction(() => { const i = document.getElementById('graph-img'); return i && i.complete; }, { timeout: 20000 });
  return page.evaluate(() => {
    const i = document.getElementById('graph-img');
    return { width: i.naturalWidth, src: i.getAttribute('src').slice(0, 26),
      areas: [...document.querySelectorAll('#graph-map area')].map(a => a.getAttribute('data-address')),
      list: document.getElementById('graph-objects').textContent };
  });
}

try {
  await page.goto(url, { waitUntil: 'load' });
  await view('/overview');
  if (mode === 'leak') {
    // the treemap from the roots: the biggest rectangle is top's first
    await page.click('#nav-treemap');
    await view('/treemap');
    const l1 = await level1();
    const big = l1.slice().sort((a, b) => b.area - a.area)[0] || {};
    check('treemap-biggest-is-top', big.address === expect.top_address, `biggest ${big.address}, top says ${expect.top_address}`);
    check('treemap-biggest-retained', big.retained === expect.top_retained, `biggest retains ${big.retained}, top says ${expect.top_retained}`);
    check('treemap-areas-by-retained', l1.every((r, i) => i === 0 || r.retained <= l1[i - 1].retained) &&
      l1.every(r => Math.abs(r.area / big.area - r.retained / big.retained) < 0.02 * Math.max(1, r.retained / big.retained) + 0.01),
    JSON.stringify(l1.slice(0, 5).map(r => [r.retained, Math.round(r.area)])));
    check('treemap-hover-title', big.title.includes(expect.top_address) && big.title.includes(expect.top_retained.toLocaleString('en-US')), `title: ${big.title}`);
    check('treemap-label', big.text.includes(expect.top_label), `label: ${big.text}`);
    await page.screenshot({ path: `${shots}/treemap.png`, fullPage: true });
    await page.screenshot({ path: `${shots}/treemap-view.png`, clip: { x: 0, y: 0, width: 1200, height: 880 } });

    // click it (its label strip, above its children): zoom into it
    const box = await (await page.$(`#treemap g.tm-node[data-depth="1"][data-address="${expect.top_address}"] rect`)).boundingBox();
    await page.evaluate(() => document.body.setAttribute('data-view', ''));
    await page.mouse.click(box.x + 6, box.y + 6);
    await view('/treemap');
    const hash = await page.evaluate(() => location.hash);
    check('treemap-zoom-hash', hash === '#/treemap?root=' + expect.top_address, `hash ${hash}`);
    const kids = (await level1()).map(r => r.address);
    check('treemap-zoom-children', JSON.stringify(kids) === JSON.stringify(expect.top_children), `drawn ${JSON.stringify(kids)}, domtree ${JSON.stringify(expect.top_children)}`);
    const rows = await page.$$eval('#tm-children tbody tr td:first-child a', t => t.map(x => x.textContent));
    check('treemap-zoom-table', JSON.stringify(rows) === JSON.stringify(expect.top_children), `table ${JSON.stringify(rows)}`);
    const root = await page.$eval('#tm-root-link', a => a.getAttribute('href'));
    check('treemap-object-link', root === '#/object?address=' + expect.top_address, `link ${root}`);
    await page.screenshot({ path: `${shots}/treemap-zoomed.png`, fullPage: true });
    // and back up
    await page.evaluate(() => document.body.setAttribute('data-view', ''));
    await page.click('#tm-up');
    await view('/treemap');
    const back = await level1();
    check('treemap-up', (await page.evaluate(() => location.hash)) === '#/treemap' && back.length === l1.length, `after up: ${back.length} rectangles, ${l1.length} before`);

    // the first suspect's drawing, from the leak suspects page
    await page.click('#nav-leaks');
    await view('/leaks');
    await page.evaluate(() => document.body.setAttribute('data-view', ''));
    await page.click('#suspect-graph-link-1');
    await view('/graph');
    const g = await graphShown();
    check('suspect-graph-shown', g.width > 100 && g.src === 'data:image/svg+xml;base64,', `image ${g.width} wide, ${g.src}`);
    const missing = expect.suspect_path.filter(a => !g.areas.includes(a));
    check('suspect-graph-path', missing.length === 0 && expect.suspect_path.length > 1, `not drawn: ${missing}; drawn ${g.areas}`);
    check('suspect-graph-objects', g.list.includes(expect.path_word), `list: ${g.list.slice(0, 200)}`);
    await page.screenshot({ path: `${shots}/graph-suspect.png`, fullPage: true });
    // a node of the drawing opens its object's page
    const target = expect.suspect_path[expect.suspect_path.length - 1];
    await page.evaluate(a => { document.body.setAttribute('data-view', ''); document.querySelector(`#graph-map area[data-address="${a}"]`).click(); }, target);
    await view('/object');
    check('suspect-graph-node-link', (await page.$eval('#obj-address', e => e.textContent)) === target, 'the area did not open its object');
    // the object's own drawing: its path and neighbours
    await page.evaluate(() => document.body.setAttribute('data-view', ''));
    await page.click('#obj-graph-link');
    await view('/graph');
    const og = await graphShown();
    check('object-graph-shown', og.width > 100 && og.areas.includes(target), `image ${og.width} wide, areas ${og.areas}`);
    check('object-graph-path', expect.object_path.every(a => og.areas.includes(a)), `path ${expect.object_path}, drawn ${og.areas}`);
    await page.screenshot({ path: `${shots}/graph-object.png`, fullPage: true });
  } else {
    // xss: the hostile class name in a treemap's labels and titles, and
    // in a drawing, as text; nothing runs
    await go('#/treemap?' + new URLSearchParams({ root: expect.holder, min_share: '0' }).toString(), '/treemap');
    const l1 = await level1();
    const evil = l1.find(r => r.address === expect.address) || {};
    check('xss-treemap-title-as-text', (evil.title || '').includes(expect.class_name), `titles: ${JSON.stringify(l1.map(r => r.title))}`);
    check('xss-treemap-label-as-text', (evil.text || '').startsWith(expect.class_name.slice(0, 12)), `label: ${evil.text}`);
    const tbl = await page.$eval('#tm-children', t => t.textContent);
    check('xss-treemap-table-as-text', tbl.includes(expect.class_name), `table: ${tbl.slice(0, 300)}`);
    await page.screenshot({ path: `${shots}/xss-treemap.png`, fullPage: true });
    await go('#/graph?' + new URLSearchParams({ address: expect.address }).toString(), '/graph');
    const g = await graphShown();
    check('xss-graph-shown', g.width > 50 && g.areas.includes(expect.address), `image ${g.width} wide, areas ${g.areas}`);
    check('xss-graph-objects-as-text', g.list.includes(expect.class_name), `list: ${g.list.slice(0, 300)}`);
    await page.screenshot({ path: `${shots}/xss-graph.png`, fullPage: true });
    const state = await page.evaluate(() => ({ pwned: window.PWNED === undefined ? null : window.PWNED, title: document.title,
      injected: document.querySelectorAll('main script, main b, main img:not(#graph-img), main svg script, main foreignObject').length }));
    check('xss-nothing-ran', state.pwned === null && state.title === 'heapdump' && state.injected === 0, JSON.stringify(state));
  }
  check(`${mode}-no-page-errors`, errors.length === 0, errors.join(' | '));
  check(`${mode}-no-network`, offsite.length === 0, offsite.join(' '));
} catch (e) {
  failed++;
  console.log(`not ok - serve_draw/browser/${mode}: ${e.message}`);
  try { await page.screenshot({ path: `${shots}/${mode}-failure.png`, fullPage: true }); } catch (e2) { /* none */ }
}
await browser.close();
process.exit(failed ? 1 : 0);
