// Real headless Chromium (Debian's `chromium`), driven by playwright-core. Missing chromium is a
// failure, not a skip: CI installs it (`apt-get install -y chromium`).
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = process.env.SVC_CHROMIUM ?? '/usr/bin/chromium';

export async function launch(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: the browser tests need Debian's chromium (apt-get install -y chromium)`);
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** Where screenshots of a test run go (printed, so a failing CI log points at them). */
export function artifactDir(): string {
  const dir = process.env.SVC_TEST_ARTIFACTS ?? mkdtempSync(join(tmpdir(), 'svc-artifacts-'));
  return dir;
}
