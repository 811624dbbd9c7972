// serve_browser.mjs - drives Debian's headless chromium (puppeteer-core,
// tests/package.json; never a downloaded browser) through heapdump serve's
// page, for tests/cli/serve.sh. Prints "ok - serve/browser/NAME" or
// "not ok - ..." lines; screenshots go to SHOTS (build/).
//
//   node serve_browser.mjs leak URL EXPECT.json SHOTS
//   node serve_browser.mjs xss URL EXPECT.json SHOTS
import { openPage } from './browser.mjs';
import { readFileSync } from 'node:fs';

const [mode, url, expectFile, shots] = process.argv.slice(2);
const expect = JSON.parse(readFileSync(expectFile, 'utf8'));
let failed = 0;
function check(name, cond, why) {
  if (cond) console.log(`ok - serve/browser/${name}`);
  else { failed++; console.log(`not ok - serve/browser/${name}: ${why}`); }
}

const { browser, page, errors, offsite } = await openPage(url);

async function view(name) {
  await page.waitForFunction(n => document.body.getAttribute('data-view') === n || document.body.getAttribute('data-view') === 'error', { timeout: 10000 }, name);
  const v = await page.evaluate(() => document.body.getAttribute('data-view'));
  if (v === 'error') throw new Error(await page.$eval('#error', e => e.textContent));
}
async function text(sel) { return page.$eval(sel, e => e.textContent); }
async function go(hash, name) {
  await page.evaluate(h => { document.body.setAttribute('data-view', ''); location.hash = h; }, hash);
  await view(name);
}

try {
  await page.goto(url, { waitUntil: 'load' });
  await view('/overview');
  if (mode === 'leak') {
    const got = await page.evaluate(() => ['objects', 'memsize', 'references', 'roots'].map(k => document.getElementById('ov-' + k).getAttribute('data-value')));
    const want = [expect.totals.objects, expect.totals.memsize, expect.totals.references, expect.totals.roots].map(String);
    check('overview-equals-stats', JSON.stringify(got) === JSON.stringify(want), `page ${got}, stats ${want}`);
    await page.screenshot({ path: `${shots}/serve-overview.png`, fullPage: true });

    // leak suspects: click through to the first suspect, see its path
    await page.click('#nav-leaks');
    await view('/leaks');
    const path1 = await text('#suspect-path-1');
    check('leaks-first-path', path1.includes(expect.path_word), `path: ${path1}`);
    await page.screenshot({ path: `${shots}/serve-leaks.png`, fullPage: true });
    await page.click('#suspect-link-1');
    await view('/object');
    const addr = await text('#obj-address');
    check('suspect-object-page', addr === expect.suspect_address, `object ${addr}, leaks says ${expect.suspect_address}`);
    const opath = await text('#obj-path');
    check('suspect-object-path', opath.includes(expect.path_word), `path: ${opath}`);
    const refs = await page.$$eval('#obj-refs tbody tr', r => r.length);
    check('suspect-object-refs', refs > 0, 'no references listed');
    await page.screenshot({ path: `${shots}/serve-object.png`, fullPage: true });

    // the dominator tree: expand the first node that has children
    await page.click('#nav-domtree');
    await view('/domtree');
    const before = await page.$$eval('#domtree li', l => l.length);
    const tog = await page.$('#domtree li > button.tog:not([disabled])');
    await tog.click();
    await page.waitForFunction(n => document.querySelectorAll('#domtree li').length > n, { timeout: 5000 }, before);
    const after = await page.$$eval('#domtree li', l => l.length);
    check('domtree-expands', after > before, `${before} -> ${after} items`);
    await page.screenshot({ path: `${shots}/serve-domtree.png`, fullPage: true });

    // groups: sort by memsize by clicking the header, drill down
    await go('#/groups?by=class', '/groups');
    // the view is /groups before the click too: clear it, so that the
    // wait is for the sorted page's render, not the one before
    await page.evaluate(() => document.body.setAttribute('data-view', ''));
    await page.click('#groups th[data-sort="memsize"]');
    await view('/groups');
    const hash = await page.evaluate(() => location.hash);
    check('groups-sort-in-address', hash.includes('sort=memsize'), `address ${hash}`);
    const ms = await page.$$eval('#groups tbody tr td:nth-child(3)', t => t.map(x => Number(x.textContent.replace(/,/g, ''))));
    check('groups-sorted-by-memsize', ms.length > 1 && ms.every((v, i) => i === 0 || ms[i - 1] >= v), `memsizes ${ms.slice(0, 5)}`);

    // search by class, then follow the group
    await page.type('#search', 'Request');
    await page.click('#search-go');
    await view('/search');
    const cls = await page.$$eval('#search-classes tbody td:first-child', t => t.map(x => x.textContent));
    check('search-by-class', cls.includes('Request'), `classes found: ${cls}`);
    await page.screenshot({ path: `${shots}/serve-search.png`, fullPage: true });
    await page.evaluate(() => { document.body.setAttribute('data-view', ''); [...document.querySelectorAll('#search-classes a')].find(a => a.textContent === 'Request').click(); });
    await view('/group');
    const n = await page.$$eval('#objects tbody tr', r => r.length);
    check('class-group-objects', n === expect.request_count, `${n} Request objects listed, stats says ${expect.request_count}`);
  } else {
    // xss: every hostile name and string shows as text, nothing runs
    await go('#/groups?by=class&filter=script', '/groups');
    const keys = await page.$$eval('#groups tbody td:first-child', t => t.map(x => x.textContent));
    check('xss-class-name-as-text', keys.includes(expect.class_name), `rows: ${JSON.stringify(keys)}`);
    await page.screenshot({ path: `${shots}/serve-xss-groups.png`, fullPage: true });
    await page.evaluate(() => { document.body.setAttribute('data-view', ''); document.querySelector('#groups tbody a').click(); });
    await view('/group');
    await page.evaluate(() => { document.body.setAttribute('data-view', ''); document.querySelector('#objects tbody a').click(); });
    await view('/object');
    const fields = await text('#obj-fields');
    check('xss-object-page', fields.includes(expect.class_name), `fields: ${fields.slice(0, 200)}`);
    await go('#/search?q=' + encodeURIComponent('PWNED'), '/search');
    const vals = await page.$$eval('#search-strings tbody code', t => t.map(x => x.textContent));
    check('xss-strings-as-text', vals.some(v => v.includes('</script><script>window.PWNED=3</script>')), `values: ${JSON.stringify(vals)}`);
    const sites = await page.$$eval('#search-sites tbody td:first-child', t => t.map(x => x.textContent));
    check('xss-site-as-text', sites.some(v => v.includes('<img src=x onerror=window.PWNED=5>.rb')), `sites: ${JSON.stringify(sites)}`);
    await go('#/search?q=' + encodeURIComponent('quoted'), '/search');
    const q = await page.$$eval('#search-strings tbody code', t => t.map(x => x.textContent));
    check('xss-quotes-and-controls', q.some(v => v.includes('"quoted"') && v.includes('\\u0001\\u0007\\u001b[2J') && !/[\u0000-\u001f]/.test(v) && v.includes('<b>bold</b>')), `values: ${JSON.stringify(q)}`);
    await page.screenshot({ path: `${shots}/serve-xss-search.png`, fullPage: true });
    const state = await page.evaluate(() => ({ pwned: window.PWNED === undefined ? null : window.PWNED, title: document.title, scripts: document.querySelectorAll('main script, main img, main b').length }));
    check('xss-nothing-ran', state.pwned === null && state.title === 'heapdump' && state.scripts === 0, JSON.stringify(state));
  }
  check('no-page-errors', errors.length === 0, errors.join(' | '));
  check('no-network', offsite.length === 0, offsite.join(' '));
} catch (e) {
  failed++;
  console.log(`not ok - serve/browser/${mode}: ${e.message}`);
  try { await page.screenshot({ path: `${shots}/serve-${mode}-failure.png`, fullPage: true }); } catch (e2) { /* none */ }
}
await browser.close();
process.exit(failed ? 1 : 0);
