// `svc config get KEY`: one stored setting (nothing printed when it is not set).
import { checkKey } from './store.js';
import type { Context } from '../context.js';

export interface ConfigGetOptions {
  key: string;
}

export function runConfigGet(opts: ConfigGetOptions, ctx: Context): void {
  const { key } = opts;
  const value = ctx.config().get(checkKey(key));
  if (ctx.out.json) return ctx.out.document({ key, value: value ?? null });
  if (value !== undefined) ctx.out.data(String(value));
}
