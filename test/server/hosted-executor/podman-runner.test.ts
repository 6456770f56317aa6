// The hosted executor for real, with Podman: the suite of runner-suite.ts (Docker runs it too).
import { runnerSuite } from './runner-suite.js';

runnerSuite('podman');
