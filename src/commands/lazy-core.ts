// What every command needs once it runs, and `svc --help` does not: the config store and the
// output (chalk comes apart, for coloured output only: ui/style.ts). One module imported lazily by
// cli.ts: each ES module loaded costs about 0.8 ms of start-up, and two imports of modules whose
// code lives in shared chunks loaded two stubs.
export { openConfig } from './config/store.js';
export { colorLevel, createOutput } from '../ui/output.js';
export { loadStyle } from '../ui/style.js';
