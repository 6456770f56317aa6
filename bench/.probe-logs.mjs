// temporary profiling driver (not committed)
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeRepo, runSvc, startService, summaryOf, svcEnv, tempDir, cleanup } from './lib.mjs';
const PRINT = join(import.meta.dirname, 'agents', 'print.mjs');
const service = await startService();
const bytes = Number(process.argv[2] ?? 100) * 1024 * 1024;
const sendLogs = process.argv[3] !== 'nolog';
const key = service.admin.createWorkItem({ projectKey: service.projectKey, kind: 'task', type: 'code', title: 'x' }).key;
const file = join(tempDir('agent'), 'ms');
const env = svcEnv(service, process.env.PROF ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${process.env.PROF}` } : {});
const args = ['run', key, '--agent-cmd', `"${process.execPath}" "${PRINT}" ${bytes} 0 "${file}"`, '--allow-empty', ...(sendLogs ? ['--send-logs'] : []), '--repo', makeRepo(), '--json'];
const cpu0 = process.cpuUsage();
const r = await runSvc(args, { env });
const cpu = process.cpuUsage(cpu0);
const s = summaryOf(r);
const agentMs = Number(readFileSync(file, 'utf8'));
console.log(JSON.stringify({ status: s.status, agentMs, MBps: (bytes / 1048576) / (agentMs / 1000), wallMs: r.wallMs, peakMB: r.peakRss / 1048576, svcCpuMs: r.cpuMs, serviceCpuMs: (cpu.user + cpu.system) / 1000 }));
await service.close(); cleanup();
