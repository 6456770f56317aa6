// The hosted executor for real, with Docker (dockerd running: scripts/dockerd.sh start; .ci/run
// starts it): the suite of runner-suite.ts, as Podman runs it.
import { runnerSuite } from './runner-suite.js';

runnerSuite('docker');
