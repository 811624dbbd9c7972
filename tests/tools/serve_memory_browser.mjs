// serve_memory_browser.mjs - heapdump serve's overview shows where each
// dump's RSS goes (the split of /api/overview's "memory", heapdump
// memory's), a column a dump (tests/cli/memory.sh, issue 35 section 1).
// Prints "ok - NAME/..." or "not ok - ..." lines.
//
//   node serve_memory_browser.mjs NAME URL WANT_JSON
//
// WANT_JSON: [[rss, bucket bytes or null...], ...], a list a dump, as
// /api/overview's memory.dumps gives them.
import { openPage } from './browser.mjs';

const [name, url, wantJson] = process.argv.slice(2);
const want = JSON.parse(wantJson);
let failed = 0;
function check(what, cond, why) {
  if (cond) console.log(`ok - ${name}/${what}`);
  else { failed++; console.log(`not ok - ${name}/${what}: ${why}`); }
}

const { browser, page, errors, offsite } = await openPage(url);
try {
  await page.goto(url, { waitUntil: 'load' });
  await page.waitForFunction(() => ['/overview', 'error'].includes(document.body.getAttribute('data-view')), { timeout: 60000 });
  const got = await page.evaluate(() => {
    const t = document.getElementById('ov-memory');
    if (!t) return null;
    const cols = t.querySelectorAll('thead th').length;
    const rows = [...t.querySelectorAll('tbody tr')].map(tr =>
      [...tr.querySelectorAll('td')].slice(1).map(td => {
        const s = td.querySelector('[data-bytes]');
        return s ? Number(s.getAttribute('data-bytes')) : null;
      }));
    return { cols, first: t.querySelector('tbody td').textContent, rows };
  });
  check('overview-memory-table', got !== null, 'no #ov-memory on the overview');
  if (got) {
    check('overview-memory-columns', got.cols === want.length + 1, `${got.cols} columns for ${want.length} dumps`);
    check('overview-memory-rss-first', got.first === 'RSS', `first row: ${got.first}`);
    // the page's rows by dump, as the API's columns
    const byDump = want.map((_, k) => got.rows.map(r => r[k]));
    check('overview-memory-values', JSON.stringify(byDump) === JSON.stringify(want),
      `page: ${JSON.stringify(byDump)}, want: ${JSON.stringify(want)}`);
    // the parts add up to the RSS, on the page too
    check('overview-memory-adds-up', byDump.every(c => c.slice(1).reduce((a, b) => a + (b || 0), 0) === c[0]), JSON.stringify(byDump));
  }
  check('no-errors', errors.length === 0, errors.join('; '));
  check('nothing-offsite', offsite.length === 0, offsite.join(' '));
} catch (e) {
  failed++;
  console.log(`not ok - ${name}/browser: ${e}`);
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);
