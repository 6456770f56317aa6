// A work item key given on the command line (`items show`, `--parent`, `items edit`): checked here
// so a typo is a usage error, not a request.
import { KEY_PATTERN } from '../../contract/types.js';
import { UsageError } from '../exit-codes.js';

export function checkKey(key: string): string {
  if (!KEY_PATTERN.test(key)) throw new UsageError(`'${key}' is not a work item key (like PROJ-12)`);
  return key;
}
