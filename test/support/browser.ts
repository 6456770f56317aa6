// Real headless Chromium, driven by playwright-core. By default the one that ships inside the npm
// package @sparticuz/chromium (a chrome-headless-shell build with the NSS libraries and a font it
// needs), so `npm test` needs nothing from the system; SVC_CHROMIUM=/usr/bin/chromium (a path) drives
// that binary instead (CONTRIBUTING.md, "Toolchain"). A missing binary is a failure, not a skip.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import { chromium, type Browser } from 'playwright-core';

const ROOT = resolve(import.meta.dirname, '../..');
const PACKAGE = join(ROOT, 'node_modules', '@sparticuz', 'chromium');

interface Chromium {
  executable: string;
  env: Record<string, string>;
}

/** The package's brotli files unpacked once per installed version, beside the other caches npm ci clears. */
function npmChromium(): Chromium {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(`@sparticuz/chromium carries a Chromium for x86-64 Linux only: on ${process.platform}-${process.arch} set SVC_CHROMIUM to a Chromium`);
  }
  const manifest = join(PACKAGE, 'package.json');
  if (!existsSync(manifest)) throw new Error(`${PACKAGE} is missing: run npm ci (the browser tests use the devDependency @sparticuz/chromium)`);
  const { version } = JSON.parse(readFileSync(manifest, 'utf8')) as { version: string };
  const cache = join(ROOT, 'node_modules', '.cache');
  const dir = join(cache, `svc-chromium-${version}`);
  if (!existsSync(join(dir, 'chromium'))) unpack(cache, dir);
  return {
    executable: join(dir, 'chromium'),
    // The libraries a bare Debian has not (libnss3, libnspr4), and a font: without one no text is drawn.
    env: { LD_LIBRARY_PATH: join(dir, 'lib'), FONTCONFIG_FILE: join(dir, 'fonts.conf') },
  };
}

/** Unpacks into a fresh folder and renames it into place: test files in parallel workers may race here. */
function unpack(cache: string, dir: string): void {
  mkdirSync(cache, { recursive: true });
  const work = mkdtempSync(join(cache, 'svc-chromium-'));
  const inflate = (name: string) => brotliDecompressSync(readFileSync(join(PACKAGE, 'bin', name)));
  writeFileSync(join(work, 'chromium'), inflate('chromium.br'), { mode: 0o755 });
  for (const archive of ['al2023.tar.br', 'fonts.tar.br']) {
    execFileSync('tar', ['-x', '-C', work], { input: inflate(archive) });
  }
  // The package's own fonts.conf names Lambda's folders; this one names the font unpacked here.
  writeFileSync(join(work, 'fonts.conf'), `<?xml version="1.0"?>\n<fontconfig><dir>${dir}/fonts</dir><cachedir>${dir}/fonts-cache</cachedir></fontconfig>\n`);
  try {
    renameSync(work, dir);
  } catch (error) {
    rmSync(work, { recursive: true, force: true });
    if (!existsSync(join(dir, 'chromium'))) throw error;
  }
}

function systemChromium(path: string): Chromium {
  if (!existsSync(path)) throw new Error(`SVC_CHROMIUM=${path} is missing (Debian: apt-get install -y chromium)`);
  return { executable: path, env: {} };
}

export async function launch(): Promise<Browser> {
  const { executable, env } = process.env.SVC_CHROMIUM ? systemChromium(process.env.SVC_CHROMIUM) : npmChromium();
  return chromium.launch({
    executablePath: executable,
    env: { ...process.env, ...env },
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
