// `svc config`: the settings users may store. The token is stored by `svc auth login` only and is
// never printed here.
import { AGENT_NAMES, isAgentName } from '../../dispatch/agent/presets.js';
import { parseDuration } from '../../dispatch/duration.js';
import type { Context } from '../context.js';
import { UsageError } from '../exit-codes.js';
import { CONFIG_KEYS, isConfigKey, type ConfigKey } from './store.js';

function checkKey(key: string): ConfigKey {
  if (!isConfigKey(key)) {
    throw new UsageError(`unknown setting '${key}'; settings: ${Object.keys(CONFIG_KEYS).join(', ')}`);
  }
  return key;
}

export function configGet(key: string, ctx: Context): void {
  const value = ctx.config().get(checkKey(key));
  if (ctx.out.json) return ctx.out.document({ key, value: value ?? null });
  if (value !== undefined) ctx.out.data(String(value));
}

export function configSet(key: string, raw: string, ctx: Context): void {
  const k = checkKey(key);
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

export function configUnset(key: string, ctx: Context): void {
  const k = checkKey(key);
  ctx.config().delete(k);
  if (ctx.out.json) return ctx.out.document({ key: k, value: null });
  ctx.out.info(`${k} unset`);
}

export function configList(ctx: Context): void {
  const stored = ctx.config().store;
  const rows = (Object.keys(CONFIG_KEYS) as ConfigKey[]).map((k) => [k, stored[k] === undefined ? '' : String(stored[k])]);
  if (ctx.out.json) return ctx.out.document(Object.fromEntries(rows.map(([k, v]) => [k, v === '' ? null : stored[k as ConfigKey]])));
  ctx.out.table(['SETTING', 'VALUE'], rows);
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
