// Component schemas of work items and the ready lanes, as the service answers with them. Enums
// list the known values: the document describes what this service emits, so an unknown value from
// the local service is drift; their types stay open (`Open<T>`) because clients read responses
// tolerantly (docs/service.md).
import * as Type from 'typebox/type';
import {
  DELIVERY_CI,
  DELIVERY_STATES,
  EXECUTORS,
  IMPLEMENTATION_SOURCES,
  KINDS,
  PLANNING_SOURCES,
  PRIORITIES,
  STATUS_CATEGORIES,
  WORK_TYPES,
} from './types.js';
import {
  bool,
  closed,
  count,
  dateTime,
  dateTimeOrNull,
  int,
  intOrNull,
  key,
  keyArray,
  keyOrNull,
  numOrNull,
  openEnumOf,
  openEnumOrNull,
  ref,
  refOrNull,
  str,
  strArray,
  strOrNull,
} from './schemas-shared.js';

// statusCategory is additive (docs/service.md): optional in the document, always sent locally.
const statusCategory = Type.Optional(openEnumOf(STATUS_CATEGORIES));

export const DependencyRef = Type.Object({ key, title: str, status: str }, closed());

export const Dependencies = Type.Object({ blockedBy: Type.Array(ref({ DependencyRef })), blocks: Type.Array(ref({ DependencyRef })) }, closed());

const linkItemProperties = {
  key,
  kind: openEnumOf(KINDS),
  title: str,
  status: str,
  statusCategory,
  priority: openEnumOf(PRIORITIES),
  assigneeId: strOrNull,
  estimateMinutes: intOrNull,
  storyPoints: numOrNull,
  parentKey: keyOrNull,
  archived: bool,
};

export const LinkItem = Type.Object(linkItemProperties, closed());

export const ChildItem = Type.Object({ ...linkItemProperties, dependencies: ref({ Dependencies }) }, closed());

export const Links = Type.Object(
  {
    blockedBy: Type.Array(ref({ LinkItem })),
    blocks: Type.Array(ref({ LinkItem })),
    relatesTo: Type.Array(ref({ LinkItem })),
    duplicates: Type.Array(ref({ LinkItem })),
    clones: Type.Array(ref({ LinkItem })),
  },
  closed(),
);

export const Readiness = Type.Object(
  {
    ready: bool,
    openBlockers: Type.Array(ref({ LinkItem })),
    blockedByAncestorKey: keyOrNull,
    blockedByAncestorTitle: strOrNull,
  },
  closed(),
);

export const TargetRepository = Type.Object({ ref: str, name: str, role: str, label: strOrNull, state: str, primary: bool }, closed());

export const Delivery = Type.Object(
  {
    repo: str,
    number: int,
    title: str,
    url: str,
    state: openEnumOf(DELIVERY_STATES),
    ci: openEnumOrNull(DELIVERY_CI),
    baseRef: strOrNull,
    defaultBranch: str,
  },
  closed(),
);

const summaryProperties = {
  key,
  kind: openEnumOf(KINDS),
  type: openEnumOrNull(WORK_TYPES),
  title: str,
  status: str,
  statusCategory,
  priority: openEnumOf(PRIORITIES),
  assigneeId: strOrNull,
  reporterId: str,
  dueDate: dateTimeOrNull,
  estimateMinutes: intOrNull,
  storyPoints: numOrNull,
  createdAt: dateTime,
  updatedAt: dateTime,
  dependencies: ref({ Dependencies }),
};

export const WorkItemSummary = Type.Object(summaryProperties, closed());

const named = Type.Object({ name: str }, closed());

export const WorkItemDetail = Type.Object(
  {
    ...summaryProperties,
    descriptionMd: strOrNull,
    parentKey: keyOrNull,
    ancestorKeys: keyArray,
    children: Type.Array(ref({ ChildItem })),
    links: ref({ Links }),
    readiness: ref({ Readiness }),
    labels: Type.Array(named),
    components: Type.Array(named),
    commentCount: count,
    sprintId: strOrNull,
    targetRepo: strOrNull,
    targetRepos: strArray,
    targetRepositories: Type.Array(ref({ TargetRepository })),
    executor: openEnumOrNull(EXECUTORS),
    planningSource: openEnumOrNull(PLANNING_SOURCES),
    implementationSource: openEnumOrNull(IMPLEMENTATION_SOURCES),
    planningHarness: strOrNull,
    planningModel: strOrNull,
    implementationHarness: strOrNull,
    implementationModel: strOrNull,
    archivedAt: dateTimeOrNull,
    deliveries: Type.Array(ref({ Delivery })),
  },
  closed(),
);

export const WorkItemCount = Type.Object({ count }, closed('The contract does not show the field; the local service answers `{count}`.'));

/** A row of ready/bugs: one group. */
export const ReadyBugGroup = Type.Object(
  { container: refOrNull({ LinkItem }), items: Type.Array(ref({ WorkItemSummary })) },
  closed('A ready bug alone has `container: null`; subtasks of a bug group under it.'),
);

/** A row of ready/containers. */
export const ReadyContainer = Type.Object({ ...linkItemProperties, readyLeafCount: count, childCount: count }, closed());
