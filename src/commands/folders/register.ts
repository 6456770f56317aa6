// `svc folders list|create|rename|move|rm`: the project's folder tree (listFolders, createFolder, getFolder, updateFolder, deleteFolder). A folder
// has no key; its id is its name on the command line.
import type { Command } from 'commander';
import type { Context, Depth } from '../context.js';
import { withExamples } from '../examples.js';
import { addFlags, flagsOf } from '../flag-table.js';
import { LIST_FLAGS, CREATE_FLAGS, MOVE_FLAGS } from './flags.js';

export function registerFolders(program: Command, context: (cmd: Command) => Context, depth: Depth = 'whole'): void {
  const folders = program.command('folders').description('list, create, rename, move and remove folders');
  if (depth === 'top') return;

  withExamples(
    addFlags(
      folders.command('list', { isDefault: true }).description('list the folders at the root (or beneath --parent), in tree order, with their paths'),
      LIST_FLAGS,
    ).action(async (_o: unknown, cmd: Command) => {
      const { runFoldersList } = await import('./list.js');
      await runFoldersList(flagsOf(cmd, LIST_FLAGS), context(cmd));
    }),
    'svc folders',
    'svc folders list --recursive',
    'svc folders list --parent fld_01J9ZK3 --json',
  );

  withExamples(
    addFlags(folders.command('create <name>').description('create a folder, last among its siblings; prints its id'), CREATE_FLAGS).action(
      async (name: string, _o: unknown, cmd: Command) => {
        const { runFoldersCreate } = await import('./create.js');
        await runFoldersCreate({ ...flagsOf(cmd, CREATE_FLAGS), name }, context(cmd));
      },
    ),
    'svc folders create "Design"',
    'svc folders create Specs --parent fld_01J9ZK3',
  );

  withExamples(
    folders
      .command('rename <id> <name>')
      .description('rename a folder (sibling names are unique, ignoring case)')
      .action(async (id: string, name: string, _opts: unknown, cmd: Command) => {
        const { runFoldersRename } = await import('./rename.js');
        await runFoldersRename({ id, name }, context(cmd));
      }),
    'svc folders rename fld_01J9ZK3 "Design system"',
  );

  withExamples(
    addFlags(folders.command('move <id>').description('move a folder to another parent, or reorder it among its siblings'), MOVE_FLAGS)
      .addHelpText(
        'after',
        '\nWith --parent or --root alone the folder goes last at the destination. --after and --before\n' +
          'together name two adjacent siblings to place it between. Anchors are siblings at the\n' +
          'destination.',
      )
      .action(async (id: string, _o: unknown, cmd: Command) => {
        const { runFoldersMove } = await import('./move.js');
        await runFoldersMove({ ...flagsOf(cmd, MOVE_FLAGS), id }, context(cmd));
      }),
    'svc folders move fld_B --after fld_A',
    'svc folders move fld_B --parent fld_P --first',
    'svc folders move fld_B --root',
  );

  withExamples(
    folders
      .command('rm <id>')
      .description('remove a folder; its child folders and filed work items move to its parent')
      .action(async (id: string, _opts: unknown, cmd: Command) => {
        const { runFoldersRemove } = await import('./rm.js');
        await runFoldersRemove({ id }, context(cmd));
      }),
    'svc folders rm fld_01J9ZK3',
  );
}
