/**
 * Visitors' codes, e-mailed off the request path. `POST /v1/links/{id}/start` writes the verification without a code
 * and wakes the sender (this replica at once, the others through a Postgres notification); the sender makes the code,
 * mails it and keeps its hash in one transaction per batch, rows locked with SKIP LOCKED so replicas never mail one
 * twice. A send that fails leaves the row due: the next pass mails a new code. A replica that stopped mid-pass
 * leaves nothing behind either: its transaction rolls back.
 */
import { createHash, randomInt } from 'node:crypto';
import type { Logger } from '@sigil/kit/log';
import { composeMessage, type Mailer } from '@sigil/mail';
import type { Db } from './db.ts';

/** The Postgres channel that wakes every replica's sender. */
export const LINK_CODES_DUE = 'link_codes_due';

const BATCH = 20;

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

export function createLinkCodeSender(deps: { db: Db; mailer: Mailer; clock: () => Date; log: Logger; lifetimeMinutes: number }): LinkCodeSender {
  let running: Promise<void> = Promise.resolve();
  let again = false;
  let busy = false;

  /** One batch in one transaction: how many were sent, and whether the batch was full (more may be due). */
  async function sendBatch(): Promise<{ sent: number; full: boolean }> {
    return deps.db.$transaction(
      async (tx) => {
        const due = await tx.$queryRawUnsafe<Array<{ id: string; email: string; name: string; mail: LinkCodeMail }>>(
          'SELECT id, email, name, mail FROM link_verifications WHERE code_sent_at IS NULL AND used_at IS NULL AND expires_at > $1 ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED',
          deps.clock(),
          BATCH,
        );
        // A batch's e-mails go out at once: an SMTP exchange is mostly waiting (tens of milliseconds each).
        const results = await Promise.allSettled(
          due.map(async (row) => {
            const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
            await deps.mailer.send({
              to: row.email,
              message: composeMessage({ kind: 'otp_code', code, minutes: deps.lifetimeMinutes, organizationName: row.mail.organizationName, envelopeTitle: row.mail.title, recipientName: row.name, testMode: row.mail.testMode }),
            });
            return { id: row.id, code };
          }),
        );
        let sent = 0;
        for (const [i, result] of results.entries()) {
          if (result.status === 'rejected') {
            deps.log.warn({ err: result.reason, verification: due[i]?.id }, 'a signing link code was not sent; the next pass tries again');
            continue;
          }
          await tx.linkVerification.update({ where: { id: result.value.id }, data: { codeHash: linkCodeHash(result.value.id, result.value.code).toString('hex'), codeSentAt: deps.clock() } });
          sent++;
        }
        return { sent, full: due.length === BATCH };
      },
      { timeout: 60_000 },
    );
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
