// `npm run test:system`: what `npm test` leaves out (test/support/system-tests.ts), with the suite's
// settings otherwise, as two projects run one after the other. First what needs programs of the
// system (gh, Podman, Docker, nftables, bubblewrap), one file at a time: the machine's nftables are
// one namespace for every file, and a fenced run in one file sweeps the stale tables another file
// planted to see `svc runs recover` (or its own sweep) remove them
// (test/commands/dispatch/network.test.ts, test/dispatch/fence/nft.test.ts). Then the whole system
// (svc as its own program, whole legs), on the suite's four workers as in `npm test`: none of it
// touches nftables (its agents keep svc's user: test/support/cli.ts's isolatedEnv).
import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';
import { NEEDS_PROGRAMS, WHOLE_SYSTEM } from './test/support/system-tests.js';

// Each project is the suite's settings (`extends: false`: the default would merge the root's
// `include`, every test file, with the project's).
const project = (name: string, include: string[], groupOrder: number, fileParallelism: boolean) => ({
  ...base,
  extends: false,
  test: { ...base.test, name, include, exclude: ['**/node_modules/**'], fileParallelism, sequence: { groupOrder } },
});

export default defineConfig({
  ...base,
  test: {
    ...base.test,
    projects: [project('programs', NEEDS_PROGRAMS, 0, false), project('whole', WHOLE_SYSTEM, 1, true)],
  },
});
