// The names of a leg's network, apart from the fence that makes them: the flags' checking reads
// them at every start, and the fence (its proxy and resolver) loads only for a leg that is fenced.
export type NetworkMode = 'open' | 'fenced' | 'none';
export const NETWORK_MODES: readonly NetworkMode[] = ['open', 'fenced', 'none'];
