// `svc config list`: every setting, stored or not (the token is not a setting and never shown).
import type { Context } from '../context.js';
import { CONFIG_KEYS, type ConfigKey } from './store.js';

export type ConfigListOptions = Record<string, never>;

export function runConfigList(_opts: ConfigListOptions, ctx: Context): void {
  const stored = ctx.config().store;
  const rows = (Object.keys(CONFIG_KEYS) as ConfigKey[]).map((k) => [k, stored[k] === undefined ? '' : String(stored[k])]);
  if (ctx.out.json) return ctx.out.document(Object.fromEntries(rows.map(([k, v]) => [k, v === '' ? null : stored[k as ConfigKey]])));
  ctx.out.table(['SETTING', 'VALUE'], rows);
}
