// The flags of `svc folders list|create|move`, each declared once (flag-table.ts): register.ts adds
// them to the commands, and the handlers take the types derived from them.
import { flag, type FlagsOf } from '../flag-table.js';
import { PROJECT } from '../common-flags.js';

export const LIST_FLAGS = [
  PROJECT,
  flag('--parent <id>', 'list the children of this folder instead of the root'),
  flag('-r, --recursive', 'walk the whole subtree, depth first, in tree order'),
];
export type FoldersListFlags = FlagsOf<typeof LIST_FLAGS>;

export const CREATE_FLAGS = [PROJECT, flag('--parent <id>', 'create it inside this folder (default: the project root)')];
export type FoldersCreateFlags = FlagsOf<typeof CREATE_FLAGS>;

export const MOVE_FLAGS = [
  flag('--parent <id>', 'move it into this folder'),
  flag('--root', 'move it to the project root'),
  flag('--after <id>', 'place it right after this sibling'),
  flag('--before <id>', 'place it right before this sibling'),
  flag('--first', 'place it first among its siblings'),
  flag('--last', 'place it last among its siblings'),
];
export type FoldersMoveFlags = FlagsOf<typeof MOVE_FLAGS>;
