// Component schemas of dispatch runs as the service answers with them (their request bodies are
// in ./schemas-requests.ts). Enum types stay open, as in ./schemas-work-items.ts.
import * as Type from 'typebox/type';
import { DISPATCH_COMMANDS, DISPOSITIONS, RUN_ORIGINS, RUN_STATUSES, STOP_REASONS } from './types.js';
import {
  anyObjectOrNull,
  bool,
  closed,
  count,
  dateTime,
  dateTimeOrNull,
  intOrNull,
  key,
  keyArray,
  openEnumOf,
  openEnumOrNull,
  ref,
  str,
  strOrNull,
} from './schemas-shared.js';

/** A card of a run as the local service records it (the contract leaves the shape open). */
export const DispatchCard = Type.Object(
  {
    workItemKey: key,
    disposition: openEnumOf(DISPOSITIONS),
    skipReason: strOrNull,
    sessionBranch: strOrNull,
    exitCode: intOrNull,
    updatedAt: dateTime,
  },
  closed('A leg of a run as the local service records it (the contract leaves it open).'),
);

export const DispatchRun = Type.Object(
  {
    id: str,
    projectId: str,
    command: openEnumOf(DISPATCH_COMMANDS),
    origin: openEnumOf(RUN_ORIGINS),
    scopeWorkItemId: strOrNull,
    scopeLabel: strOrNull,
    status: openEnumOf(RUN_STATUSES),
    stopReason: openEnumOrNull(STOP_REASONS),
    agent: strOrNull,
    model: strOrNull,
    startedAt: dateTime,
    endedAt: dateTimeOrNull,
    lastHeartbeatAt: dateTimeOrNull,
    createdById: strOrNull,
    agentInstance: anyObjectOrNull,
    cards: Type.Array(ref({ DispatchCard })),
    seq: Type.Integer({ minimum: 0, description: 'The seq of the last stored event; 0 before any.' }),
    continues: Type.Optional(anyObjectOrNull),
    repair: Type.Optional(anyObjectOrNull),
  },
  closed(),
);

export const DispatchRunOpened = Type.Object({ run: ref({ DispatchRun }), created: bool }, closed());

export const DispatchEventsAppended = Type.Object({ runId: str, appended: count, seq: count, cards: Type.Array(ref({ DispatchCard })) }, closed());

export const CloseOutPrompt = Type.Object({ runId: str, targetKey: key, prompt: str, landedKeys: keyArray }, closed());

/** A git credential entry of getGitCredential (inner shape left open by the contract). */
export const GitCredential = Type.Object(
  {
    /** The repository, as `owner/name`. */
    repository: str,
    /** The smart-HTTP address to clone and push. */
    url: str,
    username: str,
    token: str,
    expiresAt: dateTime,
  },
  closed('The contract leaves the entry open; this is the local service shape.'),
);

export const GitCredentials = Type.Object({ credentials: Type.Array(ref({ GitCredential })), dispatchedBy: strOrNull }, closed());
