// serve_process_browser.mjs - heapdump serve's leaks page says first that
// the process grew outside its Ruby heap, in the sentence of
// /api/leaks (tests/cli/process_growth.sh, issue 34 item 9). Prints
// "ok - NAME/..." or "not ok - ..." lines.
//
//   node serve_process_browser.mjs NAME URL TEXT
import { openPage } from './browser.mjs';

const [name, url, want] = process.argv.slice(2);
let failed = 0;
function check(what, cond, why) {
  if (cond) console.log(`ok - ${name}/${what}`);
  else { failed++; console.log(`not ok - ${name}/${what}: ${why}`); }
}

const { browser, page, errors, offsite } = await openPage(url);
try {
  await page.goto(url, { waitUntil: 'load' });
  await page.evaluate(() => { document.body.setAttribute('data-view', ''); location.hash = '#/leaks'; });
  await page.waitForFunction(() => ['/leaks', 'error'].includes(document.body.getAttribute('data-view')), { timeout: 60000 });
  const got = await page.evaluate(() => {
    const p = document.getElementById('process-growth');
    const main = p && p.parentElement;
    return p ? { text: p.textContent, index: Array.prototype.indexOf.call(main.children, p), h1: main.children[0].tagName } : null;
  });
  check('leaks-page-sentence', got && got.text === want, `page: ${JSON.stringify(got)}, want: ${want}`);
  check('leaks-page-sentence-first', got && got.index === 1 && got.h1 === 'H1', `position: ${JSON.stringify(got)}`);
  check('no-errors', errors.length === 0, errors.join('; '));
  check('nothing-offsite', offsite.length === 0, offsite.join(' '));
} catch (e) {
  failed++;
  console.log(`not ok - ${name}/browser: ${e}`);
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);
