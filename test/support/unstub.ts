// vitest's unstubEnvs and unstubGlobals undo stubs *before* each test. Test files share their
// workers (isolate: false), so a stub made by a file's last test would still hold while the next
// file's beforeAll and fixtures run (a stubbed GIT_CONFIG_GLOBAL reached another file's commits).
// Undone after every test as well.
import { afterEach, vi } from 'vitest';

afterEach(() => {
  vi.unstubAllEnvs();
  vi.unstubAllGlobals();
});
