// getMe: who the token belongs to and what it may do.
import type { Identity } from '../../contract/types.js';
import type { Route } from '../kernel.js';

export const getMe: Route = {
  operationId: 'getMe',
  handle({ db, principal }) {
    // A run credential cannot call /me (app.ts refuses it), so the principal is a person's token.
    if (principal.kind !== 'pat') throw new Error('getMe reached with a run credential');
    const user = db.prepare('SELECT id, name, email FROM users WHERE id = ?').get(principal.userId) as Identity['user'];
    const body: Identity = {
      user: { id: user.id, name: user.name, email: user.email },
      workspaceId: principal.workspaceId,
      permissions: [...principal.scopes],
    };
    return { status: 200, body };
  },
};
