import type { Reply } from '@sigil/kit/api';
import { AppError, notFound } from '@sigil/kit/errors';
import { newId } from '@sigil/kit/ids';
import type { Principal } from '@sigil/kit/auth';
import type { Db } from '../db.ts';
import type { ConnectionService } from './connections.ts';
import { LOGIN_STATE_SECONDS } from './login-state.ts';
import type { Logins } from './logins.ts';
import type { Binding } from './browser-binding.ts';
import { testStartUrl } from './urls.ts';

type TestRow = NonNullable<Awaited<ReturnType<Db['ssoTest']['findUnique']>>>;

/** A test expires with its login state when nobody completed it. */
function toTestView(test: TestRow, providerId: string, publicUrl: string, now: Date) {
  const status = test.status === 'pending' && test.expiresAt <= now ? 'expired' : (test.status as 'pending' | 'succeeded' | 'failed' | 'expired');
  return {
    object: 'sso_connection_test' as const,
    id: test.id,
    providerId,
    status,
    url: testStartUrl(publicUrl, providerId, test.id),
    reason: test.reason,
    reasonCode: test.reasonCode,
    error: test.reason,
    attributes: test.attributes as Record<string, unknown>,
    createdAt: test.createdAt.toISOString(),
    completedAt: test.completedAt?.toISOString() ?? null,
  };
}

/**
 * Test logins: the dashboard creates one, opens its `url` in a popup (which redirects to the IdP) and polls it. The
 * IdP's answer is checked like a sign-in's, the outcome and attributes are recorded, and no session is ever created.
 */
export function createTestLogins(deps: { db: Db; connections: ConnectionService; logins: Logins; publicUrl: string; clock: () => Date }) {
  const { db, connections, publicUrl, clock } = deps;

  async function findTest(organizationId: string, providerId: string, testId: string) {
    const connection = await connections.find(organizationId, providerId);
    const test = await db.ssoTest.findFirst({ where: { id: testId, connectionId: connection.id } });
    if (!test) throw notFound(`Test login ${testId}`);
    return { connection, test };
  }

  return {
    async create(principal: Principal, providerId: string) {
      const connection = await connections.find(principal.organizationId, providerId);
      const now = clock();
      const test = await db.ssoTest.create({
        data: { id: newId('ssot'), connectionId: connection.id, createdBy: principal.userId ?? principal.actorId, createdAt: now, expiresAt: new Date(now.getTime() + LOGIN_STATE_SECONDS * 1000) },
      });
      return toTestView(test, providerId, publicUrl, now);
    },

    async get(organizationId: string, providerId: string, testId: string) {
      const { test } = await findTest(organizationId, providerId, testId);
      return toTestView(test, providerId, publicUrl, clock());
    },

    /** 302 to the IdP; a test that already ran (or expired) cannot start again (409). */
    async start(organizationId: string, providerId: string, testId: string, binding: Binding): Promise<Reply> {
      const { connection, test } = await findTest(organizationId, providerId, testId);
      if (test.status !== 'pending' || test.expiresAt <= clock()) throw new AppError('conflict', 'This test login has already run or expired; start a new test.');
      return deps.logins.beginAt(connection, 'test', binding, { testId: test.id });
    },
  };
}
