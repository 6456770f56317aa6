// Git in the tests (fixtures, the engine in-process, spawned svc and agents) reads the suite's own
// global configuration (./gitconfig), not the machine's; both vitest configs set it.
import { fileURLToPath } from 'node:url';

export const TEST_GIT_ENV = {
  GIT_CONFIG_GLOBAL: fileURLToPath(new URL('./gitconfig', import.meta.url)),
  GIT_CONFIG_NOSYSTEM: '1',
};
