// A setting named on the command line (`config get|set|unset KEY`): one of the stored settings.
import { UsageError } from '../exit-codes.js';
import { CONFIG_KEYS, isConfigKey, type ConfigKey } from './store.js';

export function checkKey(key: string): ConfigKey {
  if (!isConfigKey(key)) {
    throw new UsageError(`unknown setting '${key}'; settings: ${Object.keys(CONFIG_KEYS).join(', ')}`);
  }
  return key;
}
