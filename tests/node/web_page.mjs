// The chat page (GET /) in Debian's Chromium, headless, driven by puppeteer-core: what the browser
// suites (web_*.test.mjs) share. A page opened here fails its suite on any script error, CSP
// violation or request to another origin (collected in `problems`).
import { rmSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import puppeteer from 'puppeteer-core';

export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
export const WAIT = { timeout: 120000 };  // generous: CI machines are shared and slow

// Chromium with profile directory `profile`, and `args` added to the usual flags.
export async function launchBrowser(profile, args = []) {
  return puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    userDataDir: profile,
    protocolTimeout: 180000,
    timeout: 120000,
    args: [
      '--no-sandbox',  // CI runs as root
      '--disable-gpu',
      '--disable-dev-shm-usage',
      '--no-first-run',
      '--no-default-browser-check',
      '--disable-extensions',
      '--disable-background-networking',
      '--disable-sync',
      '--metrics-recording-only',
      '--mute-audio',
      ...args,
    ],
  });
}

// Opens the page at `base`; every problem it causes is pushed on `problems`. Console errors
// matching `expected` are not problems: a refused request logs one (a refused /props, 401, in the
// key test; a 400 in tests that check the message the page shows for it).
export async function openPage(browser, base, problems, expected = /\b401\b/) {
  const page = await browser.newPage();
  page.setDefaultTimeout(WAIT.timeout);
  await page.setViewport({ width: 1280, height: 900 });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' && !expected.test(m.text())) problems.push(`console: ${m.text()}`);
  });
  page.on('request', (r) => {
    if (!r.url().startsWith(base) && !r.url().startsWith('data:')) problems.push(`fetched ${r.url()}`);
  });
  await page.evaluateOnNewDocument(() => {
    document.addEventListener('securitypolicyviolation', (e) =>
      console.error(`CSP violation: ${e.violatedDirective} ${e.blockedURI}`));
  });
  await page.goto(`${base}/`, { waitUntil: 'load', timeout: WAIT.timeout });
  return page;
}

export const text = (page, selector) => page.$eval(selector, (el) => el.textContent.trim());

export async function setField(page, selector, value) {
  await page.$eval(selector, (el) => { el.value = ''; });
  if (value !== '') await page.type(selector, String(value));
}

// Waits until the running request has ended (Send is enabled again and the status says how).
export async function waitIdle(page) {
  await page.waitForFunction(
    () => !document.getElementById('send-button').disabled &&
      /^(Done|Stopped|Error)/.test(document.getElementById('chat-status').textContent),
    WAIT);
}

export const lastReply = (page) =>
  page.$$eval('.msg.assistant .msg-body', (els) => els[els.length - 1].textContent);

// Closes the browser (killing it if it does not close), stops the server, removes the profile.
export async function tearDown(browser, server, profile) {
  if (browser) await browser.close().catch(() => browser.process()?.kill('SIGKILL'));
  if (server) await server.stop();
  if (profile) rmSync(profile, { recursive: true, force: true });
}

// This machine's first non-loopback IPv4 address, or null: the page opened there is what a phone
// on the same network sees (not a secure context).
export function lanAddress() {
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list || []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return null;
}
