// commander imports node:child_process for executable subcommands (`git-foo` style), which svc
// has none of; the builtin and what it pulls in (net, dgram, its own internals) cost every
// start-up ~1 ms. The bundle gives commander this instead: the module, loaded when first used.
let loaded;
const load = () => (loaded ??= process.getBuiltinModule('node:child_process'));
export default new Proxy({}, { get: (_, key) => load()[key] });
