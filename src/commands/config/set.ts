// `svc config set KEY VALUE`: a value is checked as the commands that read it will, then stored.
// The token is stored by `svc auth login` only.
import { AGENT_NAMES, isAgentName, parseDuration } from '../../dispatch/index.js';
import type { Context } from '../context.js';
import { UsageError } from '../exit-codes.js';
import { CONFIG_KEYS, checkKey } from './store.js';

export interface ConfigSetOptions {
  key: string;
  value: string;
}

export function runConfigSet(opts: ConfigSetOptions, ctx: Context): void {
  const { value: raw } = opts;
  const k = checkKey(opts.key);
  const value = CONFIG_KEYS[k].parse(raw);
  if (k === 'baseUrl') checkUrl(raw);
  // Refused now rather than stored: a bad stored value broke every later command, with a message
  // naming a flag the user never typed ("invalid duration ... for --max-wait").
  if (k === 'maxWait') parseDuration(raw, 'maxWait');
  if (k === 'agent' && !isAgentName(raw)) throw new UsageError(`unknown agent '${raw}'; presets: ${AGENT_NAMES.join(', ')} (any other command: --agent-cmd)`);
  ctx.config().set(k, value);
  if (ctx.out.json) return ctx.out.document({ key: k, value });
  ctx.out.info(`${k} set to ${String(value)}`);
}

function checkUrl(raw: string): void {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`'${raw}' is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`'${raw}' must be http:// or https://`);
}
