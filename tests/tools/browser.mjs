// browser.mjs - what the chromium drivers of the serve suites share:
// Debian's headless chromium through puppeteer-core (tests/package.json;
// never a downloaded browser, CHROMIUM overrides the path), one page of
// 1200x900 whose script errors, console errors and dialogs are collected
// in errors and every request off url's origin (data: URLs aside) in
// offsite.
import puppeteer from 'puppeteer-core';

export async function openPage(url) {
  const browser = await puppeteer.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-dev-shm-usage'],
  });
  const page = await browser.newPage();
  await page.setViewport({ width: 1200, height: 900 });
  const errors = [];
  const offsite = [];
  const origin = new URL(url).origin;
  page.on('pageerror', e => errors.push(String(e)));
  page.on('console', m => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('request', r => {
    const u = new URL(r.url());
    if (u.protocol !== 'data:' && u.origin !== origin) offsite.push(r.url());
  });
  page.on('dialog', async d => { errors.push('dialog: ' + d.message()); await d.dismiss(); });
  return { browser, page, errors, offsite };
}
