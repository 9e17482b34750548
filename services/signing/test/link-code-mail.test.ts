// The sender of visitors' codes: a failed send leaves the code due for the next pass, a sent one is not sent again,
// and two senders (replicas) never mail one verification twice.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '@sigil/kit/ids';
import { freshTestDatabase, silentLogger } from '@sigil/kit/testing';
import type { Mailer, Message } from '@sigil/mail';
import { createDb, type Db } from '../src/db.ts';
import { createLinkCodeSender, linkCodeHash } from '../src/link-code-mail.ts';
import { migrationsDir } from './helpers.ts';

let db: Db;
beforeAll(async () => {
  db = createDb(await freshTestDatabase('sigil_signing_test_link_codes', migrationsDir));
});
afterAll(async () => db?.$disconnect());

/** A mailer that refuses the first `failures` sends, and keeps the rest. */
function mailer(failures = 0) {
  const sent: Array<{ to: string; message: Message }> = [];
  let refusals = failures;
  const send: Mailer['send'] = async (input) => {
    if (refusals-- > 0) throw new Error('421 try again later');
    sent.push(input as { to: string; message: Message });
    return { messageId: `<${sent.length}@test>` };
  };
  return { sent, mailer: { send, close: () => undefined } as unknown as Mailer };
}

async function verification(email: string) {
  const id = newId('lvf');
  await db.linkVerification.create({ data: { id, signingLinkId: newId('lnk'), organizationId: 'org_codes', email, name: 'Ada', mail: { organizationName: 'Acme', title: 'Onboarding', testMode: false }, expiresAt: new Date(Date.now() + 600_000) } });
  return id;
}

const sender = (m: Mailer) => createLinkCodeSender({ db, mailer: m, clock: () => new Date(), log: silentLogger(), lifetimeMinutes: 10 });

describe('mailing visitors\' codes', () => {
  it('leaves a code whose send failed due, mails it on the next pass with the hash kept, and never twice', async () => {
    const id = await verification('ada@example.com');
    const failing = mailer(1);
    expect(await sender(failing.mailer).sendDue()).toBe(0);
    // Still due: not sent, its claim freed for the next pass.
    expect(await db.linkVerification.findUnique({ where: { id } })).toMatchObject({ codeSentAt: null, codeClaimedUntil: null });
    const working = mailer();
    expect(await sender(working.mailer).sendDue()).toBe(1);
    const code = /\b(\d{6})\b/.exec(working.sent[0]!.message.text)?.[1] as string;
    expect(working.sent[0]!.to).toBe('ada@example.com');
    const row = await db.linkVerification.findUnique({ where: { id } });
    expect(row?.codeHash).toBe(linkCodeHash(id, code).toString('hex'));
    expect(await sender(working.mailer).sendDue()).toBe(0);
  });

  it('shares due codes between two senders without mailing any twice', async () => {
    const emails = Array.from({ length: 45 }, (_, i) => `visitor${i}@example.com`);
    for (const email of emails) await verification(email);
    const a = mailer();
    const b = mailer();
    const [sentA, sentB] = await Promise.all([sender(a.mailer).sendDue(), sender(b.mailer).sendDue()]);
    expect(sentA + sentB).toBe(45);
    expect([...a.sent, ...b.sent].map((m) => m.to).sort()).toEqual([...emails].sort());
  });

  it('keeps the code\'s hash before the e-mail leaves, so a visitor who reads it at once can verify', async () => {
    const id = await verification('quick@example.com');
    const seen: Array<string | null | undefined> = [];
    const checking = { send: async () => { seen.push((await db.linkVerification.findUnique({ where: { id } }))?.codeHash); return { messageId: '<1@test>' }; }, close: () => undefined } as unknown as Mailer;
    expect(await sender(checking).sendDue()).toBe(1);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatch(/^[0-9a-f]{64}$/);
  });
});
