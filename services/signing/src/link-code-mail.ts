/**
 * Visitors' codes, e-mailed off the request path. `POST /v1/links/{id}/start` writes the verification without a code
 * and wakes the sender (this replica at once, the others through a Postgres notification). The sender claims due rows
 * (SKIP LOCKED, so replicas never claim one twice), makes each code and commits its hash before mailing it, so the
 * visitor can verify the moment the e-mail arrives. A send that fails frees its claim, and a replica that stopped
 * mid-send leaves a claim that expires: either way the next pass makes and mails a new code.
 */
import { createHash, randomInt } from 'node:crypto';
import { brandingOrNone, type BrandingCache } from '@sigil/kit/branding';
import type { Logger } from '@sigil/kit/log';
import { composeMessage, type Mailer } from '@sigil/mail';
import type { Db } from './db.ts';

/** The Postgres channel that wakes every replica's sender. */
export const LINK_CODES_DUE = 'link_codes_due';

const BATCH = 20;
/** How long a sender holds a claimed code before another may make it again (a sender that stopped mid-send). */
const CLAIM_MS = 60_000;

export interface LinkCodeMail {
  organizationName: string;
  title: string;
  testMode: boolean;
}

export const linkCodeHash = (verificationId: string, code: string) => createHash('sha256').update(`${verificationId}:${code}`).digest();

export interface LinkCodeSender {
  /** Mails every due code now; answers how many were sent. */
  sendDue(): Promise<number>;
  /** Asks for a pass soon (one runs at a time; a wake during a pass runs another after it). */
  wake(): void;
  /** Waits for the pass under way. */
  idle(): Promise<void>;
}

export function createLinkCodeSender(deps: { db: Db; mailer: Mailer; clock: () => Date; log: Logger; lifetimeMinutes: number; branding?: Pick<BrandingCache, 'get'> }): LinkCodeSender {
  let running: Promise<void> = Promise.resolve();
  let again = false;
  let busy = false;

  /**
   * One batch: claim due codes and keep their hashes (committed before any mail leaves, so a visitor who reads the
   * e-mail at once can verify), mail them at once, then mark the sent ones; a failed send frees its claim.
   */
  async function sendBatch(): Promise<{ sent: number; full: boolean }> {
    const now = deps.clock();
    const claimed = await deps.db.$transaction(async (tx) => {
      const due = await tx.$queryRawUnsafe<Array<{ id: string; organization_id: string; email: string; name: string; mail: LinkCodeMail }>>(
        `SELECT id, organization_id, email, name, mail FROM link_verifications
         WHERE code_sent_at IS NULL AND used_at IS NULL AND expires_at > $1 AND (code_claimed_until IS NULL OR code_claimed_until < $1)
         ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
        now,
        BATCH,
      );
      const codes = due.map((row) => ({ ...row, code: String(randomInt(0, 1_000_000)).padStart(6, '0') }));
      for (const row of codes) {
        await tx.linkVerification.update({ where: { id: row.id }, data: { codeHash: linkCodeHash(row.id, row.code).toString('hex'), codeClaimedUntil: new Date(now.getTime() + CLAIM_MS) } });
      }
      return codes;
    });
    // A batch's e-mails go out at once: an SMTP exchange is mostly waiting (tens of milliseconds each).
    const results = await Promise.allSettled(
      claimed.map(async (row) =>
        deps.mailer.send({
          to: row.email,
          message: composeMessage(
            { kind: 'otp_code', code: row.code, minutes: deps.lifetimeMinutes, organizationName: row.mail.organizationName, envelopeTitle: row.mail.title, recipientName: row.name, testMode: row.mail.testMode },
            await brandingOrNone(deps.branding, row.organization_id, deps.log),
          ),
        }),
      ),
    );
    let sent = 0;
    for (const [i, result] of results.entries()) {
      const id = claimed[i]!.id;
      if (result.status === 'rejected') {
        deps.log.warn({ err: result.reason, verification: id }, 'a signing link code was not sent; the next pass tries again');
        await deps.db.linkVerification.update({ where: { id }, data: { codeClaimedUntil: null } });
        continue;
      }
      await deps.db.linkVerification.update({ where: { id }, data: { codeSentAt: deps.clock(), codeClaimedUntil: null } });
      sent++;
    }
    return { sent, full: claimed.length === BATCH };
  }

  async function sendDue(): Promise<number> {
    let total = 0;
    for (let batch = await sendBatch(); ; batch = await sendBatch()) {
      total += batch.sent;
      if (!batch.full) return total;
    }
  }

  function pass(): void {
    if (busy) {
      again = true;
      return;
    }
    busy = true;
    running = (async () => {
      do {
        again = false;
        await sendDue().catch((error: unknown) => deps.log.error({ err: error }, 'signing link codes: a pass failed'));
      } while (again);
      busy = false;
    })();
  }

  return { sendDue, wake: pass, idle: () => running };
}
