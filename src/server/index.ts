// Entry point of the local service: `startServer` for tests and demos (in-process), and
// `runServerCommand` for the CLI's `svc server …` commands.
export type { Admin } from './admin.js';
export type { ResponseInfo } from './app.js';
export { DEFAULT_CONFIG, startServer, type LocalService, type StartOptions } from './start.js';
export { parseRateLimit, runServerCommand, type ServerCommand, type ServerCommandIO } from './commands.js';
