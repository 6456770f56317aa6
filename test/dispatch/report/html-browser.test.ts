// The HTML report in a real Chromium: the timeline draws parallel legs as overlapping bars, the
// tables say what happened, it reads with JavaScript off, loads nothing from the network, shows
// light and dark, and prints with the log tails open. Screenshots go to a temp folder (and to
// docs/report.png for the README with SVC_UPDATE_SCREENSHOTS=1).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildRunReport, renderReport } from '../../../src/dispatch/report/index.js';
import { artifactDir, launch } from '../../support/browser.js';
import { makeFixture, PLANTED_CUSTOM } from './fixture.js';

let browser: Browser;
let file: string;
let artifacts: string;

beforeAll(async () => {
  browser = await launch();
  const fx = await makeFixture();
  const report = await buildRunReport(fx.stateDir, fx.runId, { secrets: [PLANTED_CUSTOM] });
  artifacts = artifactDir();
  mkdirSync(artifacts, { recursive: true });
  file = join(artifacts, 'report.html');
  writeFileSync(file, renderReport('html', [report]));
  console.log(`html report test artifacts: ${artifacts}`);
}, 60_000);

afterAll(async () => {
  await browser?.close();
});

async function open(opts: { javaScriptEnabled?: boolean; colorScheme?: 'light' | 'dark' } = {}): Promise<{ page: Page; requests: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1100, height: 900 }, deviceScaleFactor: 1, ...opts });
  const page = await context.newPage();
  const requests: string[] = [];
  page.on('request', (r) => requests.push(r.url()));
  await page.goto(`file://${file}`);
  return { page, requests };
}

describe('the HTML report in Chromium', () => {
  test('timeline: a row per card, parallel legs overlap, skipped cards say why', async () => {
    const { page, requests } = await open({ javaScriptEnabled: false });
    const rows = await page.locator('.tl-row:not(.tl-axis) .tl-label').allInnerTexts();
    expect(rows).toEqual(['DEMO-3', 'DEMO-5', 'DEMO-6', 'DEMO-7', 'DEMO-8']);
    const box = async (key: string) => (await page.locator(`.tl-bar[data-key="${key}"]`).boundingBox())!;
    const [d3, d5, d6] = [await box('DEMO-3'), await box('DEMO-5'), await box('DEMO-6')];
    // DEMO-3 ran 02:00:01–02:03:00 and DEMO-5 02:00:02–02:02:00 across a 4.5 minute run: they overlap.
    expect(d5.x).toBeLessThan(d3.x + d3.width);
    expect(d6.x).toBeLessThan(d3.x + d3.width);
    const track = (await page.locator('.tl-row:not(.tl-axis) .tl-track').first().boundingBox())!;
    // 02:00:01 → 02:03:00 of 02:00:00 → 02:04:30 is 179/270 of the track.
    expect(d3.width / track.width).toBeCloseTo(179 / 270, 2);
    expect(await page.locator('.tl-bar[data-key="DEMO-5"]').getAttribute('data-disposition')).toBe('failed');
    expect(await page.locator('.tl-bar[data-key="DEMO-7"]').count()).toBe(0);
    expect(await page.locator('.tl-row', { hasText: 'DEMO-7' }).locator('.tl-note').innerText()).toBe(
      'skipped: implemented by an earlier run: svc/DEMO-7 holds the work',
    );
    expect(requests).toEqual([`file://${file}`]);
  });

  test('header and tables: status, stop reason, tokens, cost; per card the exit code, commits, diff --stat and the reason', async () => {
    const { page } = await open({ javaScriptEnabled: false });
    const facts = Object.fromEntries(
      await page.locator('.facts > div').evaluateAll((els) => els.map((e) => [e.querySelector('dt')!.textContent, e.querySelector('dd')!.textContent])),
    );
    expect(facts).toMatchObject({ Command: 'svc batch', Status: 'failed', 'Stop reason': 'halted', Duration: '4m 30s', Tokens: '205,298', Cost: '$0.4370' });
    const overview = await page
      .locator('table.overview tbody tr')
      .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent!.trim())));
    expect(overview[1]).toEqual(['DEMO-5 Guest checkout tests', 'failed', '1m 58s', '1', '44,350', '$0.0831', 'svc/DEMO-5', '0', 'exit 1']);
    const d3 = page.locator('article.leg[data-key="DEMO-3"]');
    expect(await d3.locator('ul.commits li').allInnerTexts()).toEqual([
      expect.stringMatching(/^[0-9a-f]{7} DEMO-3: tests for the endpoint$/),
      expect.stringMatching(/^[0-9a-f]{7} DEMO-3: guest checkout endpoint$/),
    ]);
    expect(await d3.locator('pre.stat').innerText()).toContain('2 files changed, 17 insertions(+)');
    const d5 = page.locator('article.leg[data-key="DEMO-5"]');
    expect(await d5.locator('.reason').innerText()).toBe('exit 1');
    // The failed leg's log is open; the others are one click away.
    expect(await d5.locator('details pre.log').isVisible()).toBe(true);
    expect(await d5.locator('details pre.log').innerText()).toContain('expected 422, got 500');
    expect(await d3.locator('details pre.log').isVisible()).toBe(false);
    await d3.locator('details summary').click();
    expect(await d3.locator('details pre.log').innerText()).toContain('✓ 14 tests passed');
  });

  test('light, dark and print: screenshots, and the log tails open on paper', async () => {
    const light = await open({ colorScheme: 'light' });
    const bg = (p: Page) => p.evaluate(() => getComputedStyle(document.body).backgroundColor);
    expect(await bg(light.page)).toBe('rgb(255, 255, 255)');
    const shot = await light.page.screenshot({ path: join(artifacts, 'report-light.png'), fullPage: true });
    if (process.env.SVC_UPDATE_SCREENSHOTS) {
      await light.page.screenshot({ path: join(import.meta.dirname, '../../../docs/report.png'), clip: { x: 0, y: 0, width: 1100, height: 1000 } });
    }
    expect(shot.length).toBeGreaterThan(20_000);
    const dark = await open({ colorScheme: 'dark' });
    expect(await bg(dark.page)).toBe('rgb(13, 17, 23)');
    await dark.page.screenshot({ path: join(artifacts, 'report-dark.png'), fullPage: true });

    await light.page.emulateMedia({ media: 'print' });
    expect(await light.page.locator('article.leg[data-key="DEMO-3"] details pre.log').isVisible()).toBe(true);
    const pdf = await light.page.pdf({ format: 'A4', printBackground: true });
    writeFileSync(join(artifacts, 'report.pdf'), pdf);
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
  });
});
