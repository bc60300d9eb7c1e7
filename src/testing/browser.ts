/**
 * TEST-ONLY: the console's browser tests drive Debian's chromium headless with puppeteer-core (no
 * browser is downloaded). Screenshots go to dist/test-output/console/ (git-ignored).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';

// The page functions below run in the browser; these names are the browser's (the tests compile without the DOM library).
declare const document: { getElementById(id: string): { dataset: Record<string, string | undefined> } | null; querySelector(s: string): unknown };

/** The installed chromium, or undefined (the browser tests are then skipped, saying why). */
export const chromium = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));

/** Why the browser tests are skipped, or false. */
export const noChromium: string | false = chromium === undefined ? 'no chromium installed (apt-get install chromium)' : false;

export const screenshotsDir = join(dirname(fileURLToPath(import.meta.url)), '..', 'test-output', 'console');

export async function launchBrowser(): Promise<Browser> {
  mkdirSync(screenshotsDir, { recursive: true });
  return puppeteer.launch({ executablePath: chromium!, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
}

/** Waits until the console's router rendered its page (a heading or an error). */
export async function waitForView(page: Page): Promise<void> {
  await page.waitForFunction(() => document.getElementById('view')?.dataset['loading'] === undefined && document.querySelector('#view h1, #view .error') !== null, { timeout: 10_000 });
}

export function screenshot(page: Page, name: string): Promise<unknown> {
  return page.screenshot({ path: join(screenshotsDir, name), fullPage: true });
}
