// The flags of `svc items list|count|create|edit`, each declared once (flag-table.ts): register.ts
// adds them to the commands, and the handlers take the types derived from them.
import { flag, type FlagsOf, rephrase } from '../flag-table.js';
import { LIMIT, PROJECT as PROJECT_ROW } from '../common-flags.js';

const PROJECT = rephrase(PROJECT_ROW, 'project key');

export const LIST_FLAGS = [PROJECT_ROW, flag('--filter <expr>', 'a filter expression, e.g. "status:todo priority:high,highest"'), LIMIT];
export type ItemsListFlags = FlagsOf<typeof LIST_FLAGS>;

export const COUNT_FLAGS = [PROJECT, flag('--filter <expr>', 'a filter expression')];
export type ItemsCountFlags = FlagsOf<typeof COUNT_FLAGS>;

export const CREATE_FLAGS = [
  PROJECT,
  flag('--kind <kind>', 'epic, story, task, subtask or bug', { required: true }),
  flag('--title <title>', 'the title', { required: true }),
  flag('--parent <key>', 'parent item'),
  flag('--description <markdown>', 'description (Markdown)'),
  flag('--priority <p>', 'lowest … highest'),
  flag('--type <type>', 'code, test, design, …'),
];
export type ItemsCreateFlags = FlagsOf<typeof CREATE_FLAGS>;

export const EDIT_FLAGS = [
  flag('--title <title>', 'new title'),
  flag('--description <markdown>', 'new description'),
  flag('--priority <p>', 'new priority'),
  flag('--assignee <id>', 'new assignee; `none` to clear'),
  flag('--explanation <markdown>', 'why the change is made'),
  // Not the update's (api-v1's update body has no status): named here only to say where it moves.
  flag('--status <status>', 'refused: the service moves status (the local service: svc server done KEY)'),
];
export type ItemsEditFlags = FlagsOf<typeof EDIT_FLAGS>;
