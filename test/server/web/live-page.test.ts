// The read-only pages of `svc server` in a real Chromium, against a real run: log in with a token
// (a wrong one is refused), the session cookie is HttpOnly and SameSite=Strict, the run appears in
// the list and its page follows the legs live (no reload) on the same timeline as the report, and
// the API still answers only to bearer tokens.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAdmin } from '../../../src/server/admin.js';
import { openDatabase } from '../../../src/server/db.js';
import { MODULES } from '../../../src/server/modules.js';
import { isolatedEnv, makeRepo, runCli, type CliResult } from '../../support/cli.js';
import { startLocalServer, type LocalServer } from '../../support/server-process.js';
import { artifactDir, launch } from '../../support/browser.js';

// Each leg waits for its gate file, so the test decides when legs end.
const AGENT = `#!/bin/sh
i=0
while [ ! -e "$GATE/$SVC_CARD_KEY" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done
echo "working on $SVC_CARD_KEY"
if [ "$SVC_CARD_KEY" = DEMO-5 ]; then exit 4; fi
echo x > "$SVC_CARD_KEY.txt" && git add -A && git -c user.name=a -c user.email=a@example.invalid commit -qm "$SVC_CARD_KEY: done"
`;

let server: LocalServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let gate: string;
let agent: string;
let artifacts: string;
let runId = '';

beforeAll(async () => {
  browser = await launch();
  server = await startLocalServer();
  const root = mkdtempSync(join(tmpdir(), 'svc-live-'));
  gate = join(root, 'gate');
  (await import('node:fs')).mkdirSync(gate);
  agent = join(root, 'agent.sh');
  writeFileSync(agent, AGENT, { mode: 0o755 });
  artifacts = artifactDir();
  console.log(`live page test artifacts: ${artifacts}`);
  context = await browser.newContext({ viewport: { width: 1100, height: 800 } });
  page = await context.newPage();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  const violations = await server?.stop();
  expect(violations ?? []).toEqual([]);
});

describe('the live page of svc server', () => {
  test('a wrong token is refused at the login form; the right one opens a session kept in an HttpOnly, SameSite=Strict cookie', async () => {
    await page.goto(server.url + '/');
    await page.fill('input[name=token]', `svc_pat_${'x'.repeat(32)}`);
    await page.click('button[type=submit]');
    expect(await page.locator('.error').innerText()).toMatch(/not valid/);
    expect(await context.cookies()).toEqual([]);

    await page.fill('input[name=token]', server.token);
    await page.click('button[type=submit]');
    await page.waitForSelector('h1:has-text("Dispatch runs")');
    const cookies = await context.cookies();
    expect(cookies).toHaveLength(1);
    expect(cookies[0]).toMatchObject({ name: 'svc_session', httpOnly: true, sameSite: 'Strict' });
    expect(cookies[0]!.value).not.toContain(server.token);
    expect(await page.evaluate(() => document.cookie)).toBe('');
    expect(await page.content()).not.toContain(server.token);
    // The session opens the pages, not the API: /api/v1 still wants a bearer token.
    const api = await page.evaluate(async () => (await fetch('/api/v1/me')).status);
    expect(api).toBe(401);
  });

  test('a run appears in the list, and its page follows the legs live on the timeline', async () => {
    const env = isolatedEnv({ SVC_BASE_URL: server.url, SVC_TOKEN: server.token, SVC_PROJECT: 'DEMO', SVC_HEARTBEAT_INTERVAL: '1s', GATE: gate });
    const running: Promise<CliResult> = runCli(
      [
        'run',
        'DEMO-3',
        'DEMO-5',
        'DEMO-6',
        '--parallel',
        '2',
        '--on-failure',
        'continue',
        '--agent-cmd',
        `sh ${agent}`,
        '--agent-env',
        'GATE',
        '--repo',
        await makeRepo(),
        '--json',
      ],
      { env, timeoutMs: 120_000 },
    );
    // The list refreshes itself: the new run shows up without a reload.
    await page.evaluate(() => ((window as unknown as { marker: number }).marker = 1));
    const row = page.locator('table.runs tbody tr').first();
    await row.locator('.badge.s-running').waitFor({ timeout: 20_000 });
    expect(await page.evaluate(() => (window as unknown as { marker?: number }).marker)).toBe(1);
    await row.locator('a').click();
    await page.waitForSelector('h2:has-text("Timeline")');
    await page.evaluate(() => ((window as unknown as { marker: number }).marker = 2));

    // Two legs at once: both bars running, drawn overlapping.
    await page.locator('.tl-bar[data-key="DEMO-5"][data-disposition="running"]').waitFor({ timeout: 20_000 });
    await page.locator('.tl-bar[data-key="DEMO-3"][data-disposition="running"]').waitFor({ timeout: 20_000 });
    expect(await page.locator('.tl-row', { hasText: 'DEMO-6' }).locator('.tl-note').innerText()).toBe('queued');
    await page.screenshot({ path: join(artifacts, 'live-running.png'), fullPage: true });

    writeFileSync(join(gate, 'DEMO-5'), '');
    await page.locator('.tl-bar[data-key="DEMO-5"][data-disposition="failed"]').waitFor({ timeout: 20_000 });
    writeFileSync(join(gate, 'DEMO-3'), '');
    writeFileSync(join(gate, 'DEMO-6'), '');
    const r = await running;
    expect(r.code, r.stderr).toBe(1);
    runId = (JSON.parse(r.stdout) as { runId: string }).runId;
    await page.locator('.facts .badge.s-failed').waitFor({ timeout: 20_000 });
    expect(await page.evaluate(() => (window as unknown as { marker?: number }).marker), 'the page updated in place').toBe(2);
    expect(page.url()).toBe(`${server.url}/runs/${runId}`);

    const legs = await page
      .locator('table.legs tbody tr')
      .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent!.trim())));
    expect(legs.map((l) => [l[0], l[1], l[3], l[4]])).toEqual([
      ['DEMO-3 Guest checkout API', 'implemented', '0', 'svc/DEMO-3'],
      ['DEMO-5 Guest checkout tests', 'failed', '4', 'svc/DEMO-5'],
      ['DEMO-6 Upgrade the HTTP client', 'implemented', '0', 'svc/DEMO-6'],
    ]);
    const bars = await page.locator('.tl-bar').evaluateAll((els) => els.map((e) => [e.getAttribute('data-key'), e.getAttribute('data-disposition')]));
    expect(bars).toEqual([
      ['DEMO-3', 'implemented'],
      ['DEMO-5', 'failed'],
      ['DEMO-6', 'implemented'],
    ]);
    // DEMO-6 started only when DEMO-5 ended: its bar begins right of DEMO-5's start.
    // svc run A B C has no scope key: its page shows the cards it was given, not "none".
    expect(await page.locator('.facts div', { hasText: 'Scope' }).locator('dd').innerText()).toBe('DEMO-3, DEMO-5, DEMO-6');
    const x = async (k: string) => (await page.locator(`.tl-bar[data-key="${k}"]`).boundingBox())!.x;
    expect(await x('DEMO-6')).toBeGreaterThan(await x('DEMO-5'));
    await page.screenshot({ path: join(artifacts, 'live-done.png'), fullPage: true });
  }, 120_000);

  test('the list is newest first; log out ends the session; an unknown run is a 404 page; a page without a session goes to the login form', async () => {
    const env = isolatedEnv({ SVC_BASE_URL: server.url, SVC_TOKEN: server.token, SVC_PROJECT: 'DEMO' });
    const hosted = await runCli(['run', 'DEMO-7', '--hosted', '--json'], { env });
    expect(hosted.code, hosted.stderr).toBe(0);
    const newer = (JSON.parse(hosted.stdout) as { run: { id: string } }).run.id;
    await page.goto(server.url + '/');
    await page.locator(`table.runs tr[data-run="${newer}"]`).waitFor();
    expect(await page.locator('table.runs tbody tr').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-run')))).toEqual([newer, runId]);
    const missing = await page.goto(`${server.url}/runs/run_Nope`);
    expect(missing!.status()).toBe(404);
    await page.goto(server.url + '/');
    await page.click('button:has-text("Log out")');
    await page.waitForSelector('input[name=token]');
    expect(await context.cookies()).toEqual([]);
    const again = await page.goto(`${server.url}/runs/run_Nope`);
    expect(again!.url()).toBe(`${server.url}/`);
    expect(await page.locator('input[name=token]').count()).toBe(1);
  });

  test('a token sees what the API would show it: narrowed to another project, no runs and a 404; without project:browse, no login; revoked, the session ends', async () => {
    expect(runId).not.toBe('');
    const db = openDatabase(server.db, MODULES);
    let narrowed: string;
    let editOnly: string;
    let narrowedId: string;
    try {
      const owner = db.prepare('SELECT workspace_id, user_id FROM tokens ORDER BY rowid LIMIT 1').get() as { workspace_id: string; user_id: string };
      const admin = createAdmin(db);
      admin.createProject({ workspaceId: owner.workspace_id, key: 'OTHER', name: 'Other' });
      ({ token: narrowed, id: narrowedId } = admin.createToken({
        workspaceId: owner.workspace_id,
        userId: owner.user_id,
        projectKey: 'OTHER',
        scopes: ['project:browse'],
      }));
      ({ token: editOnly } = admin.createToken({ workspaceId: owner.workspace_id, userId: owner.user_id, scopes: ['work_item:edit'] }));
    } finally {
      db.close();
    }
    // Without JavaScript: the form logs in, the list reads, and the page reloads itself instead.
    const plain = await browser.newContext({ javaScriptEnabled: false });
    const pp = await plain.newPage();
    await pp.goto(server.url + '/');
    await pp.fill('input[name=token]', server.token);
    await pp.click('button[type=submit]');
    await pp.waitForSelector('h1:has-text("Dispatch runs")');
    expect(await pp.locator(`table.runs tr[data-run="${runId}"] .badge`).innerText()).toBe('failed');
    expect(await pp.content()).toMatch(/<noscript><meta http-equiv="refresh" content="10"><\/noscript>/);
    await plain.close();

    // A login posted from another site is refused before the token is even looked at.
    const crossSite = await new Promise<number>((done, fail) => {
      const req = request(
        `${server.url}/login`,
        { method: 'POST', headers: { origin: 'http://evil.example', 'content-type': 'application/x-www-form-urlencoded' } },
        (res) => {
          res.resume();
          done(res.statusCode ?? 0);
        },
      );
      req.on('error', fail);
      req.end(`token=${server.token}`);
    });
    expect(crossSite).toBe(403);
    const fetchedCrossSite = await new Promise<number>((done, fail) => {
      const req = request(
        `${server.url}/login`,
        { method: 'POST', headers: { 'sec-fetch-site': 'cross-site', 'content-type': 'application/x-www-form-urlencoded' } },
        (res) => {
          res.resume();
          done(res.statusCode ?? 0);
        },
      );
      req.on('error', fail);
      req.end(`token=${server.token}`);
    });
    expect(fetchedCrossSite).toBe(403);

    const other = await browser.newContext();
    const p = await other.newPage();
    await p.goto(server.url + '/');
    await p.fill('input[name=token]', editOnly);
    await p.click('button[type=submit]');
    expect(await p.locator('.error').innerText()).toMatch(/lacks the project:browse scope/);

    await p.fill('input[name=token]', narrowed);
    await p.click('button[type=submit]');
    await p.waitForSelector('h1:has-text("Dispatch runs")');
    expect(await p.locator('#live').innerText()).toBe('No dispatch runs yet.');
    expect((await p.goto(`${server.url}/runs/${runId}`))!.status()).toBe(404);

    const db2 = openDatabase(server.db, MODULES);
    try {
      createAdmin(db2).revokeToken(narrowedId);
    } finally {
      db2.close();
    }
    await p.goto(server.url + '/');
    expect(await p.locator('input[name=token]').count()).toBe(1);
    expect(await other.cookies()).toEqual([]);
    await other.close();
  });
});
