// `svc config unset KEY`: removes a stored setting.
import { checkKey } from './store.js';
import type { Context } from '../context.js';

export interface ConfigUnsetOptions {
  key: string;
}

export function runConfigUnset(opts: ConfigUnsetOptions, ctx: Context): void {
  const k = checkKey(opts.key);
  ctx.config().delete(k);
  if (ctx.out.json) return ctx.out.document({ key: k, value: null });
  ctx.out.info(`${k} unset`);
}
