/** The `billing_accounts` rows: one query each, no business rule. */
import type { Db, Tx } from '../db.ts';
import type { ProcessorSubscription } from '../processor/processor.ts';
import type { AccountRow } from './state.ts';

export const readAccount = (db: Db | Tx, organizationId: string): Promise<AccountRow | null> => db.billingAccount.findUnique({ where: { organizationId } });

export async function organizationOfCustomer(db: Db | Tx, customerId: string): Promise<string | undefined> {
  return (await db.billingAccount.findUnique({ where: { customerId }, select: { organizationId: true } }))?.organizationId;
}

/** Records the organization's customer at the processor (once: an existing one is kept). */
export async function keepCustomer(db: Db | Tx, organizationId: string, customerId: string, now: Date): Promise<string> {
  const row = await db.billingAccount.upsert({
    where: { organizationId },
    create: { organizationId, customerId, updatedAt: now },
    update: {},
  });
  if (row.customerId) return row.customerId;
  await db.billingAccount.update({ where: { organizationId }, data: { customerId, updatedAt: now } });
  return customerId;
}

/** Locks the organization's row (created on Free when missing) for the rest of the transaction. */
export async function lockAccount(tx: Tx, organizationId: string, now: Date): Promise<AccountRow & { stateAt: Date | null }> {
  await tx.$executeRawUnsafe('INSERT INTO billing_accounts (organization_id, updated_at) VALUES ($1, $2) ON CONFLICT (organization_id) DO NOTHING', organizationId, now);
  const [row] = await tx.$queryRawUnsafe<Array<{ state_at: Date | null }>>('SELECT state_at FROM billing_accounts WHERE organization_id = $1 FOR UPDATE', organizationId);
  const account = await tx.billingAccount.findUniqueOrThrow({ where: { organizationId } });
  return { ...account, stateAt: row?.state_at ?? null };
}

/** Writes a subscription's state as of `stateAt` (the processor's time of it). */
export async function writeSubscription(tx: Tx, organizationId: string, subscription: ProcessorSubscription, stateAt: Date, now: Date): Promise<void> {
  await tx.billingAccount.update({
    where: { organizationId },
    data: {
      plan: subscription.plan,
      status: subscription.status,
      customerId: subscription.customerId,
      subscriptionId: subscription.id,
      currentPeriodStart: subscription.currentPeriodStart,
      currentPeriodEnd: subscription.currentPeriodEnd,
      cancelAtPeriodEnd: subscription.cancelAtPeriodEnd,
      ...(subscription.paymentMethod ? { paymentMethod: { ...subscription.paymentMethod } } : {}),
      stateAt,
      updatedAt: now,
    },
  });
}

/** The subscription ended: back to Free (the customer and its card stay on file). */
export async function endSubscription(tx: Tx, organizationId: string, stateAt: Date, now: Date): Promise<void> {
  await tx.billingAccount.update({
    where: { organizationId },
    data: { plan: 'free', status: 'active', subscriptionId: null, currentPeriodStart: null, currentPeriodEnd: null, cancelAtPeriodEnd: false, stateAt, updatedAt: now },
  });
}

/** Marks a processor event handled; false when it had been already. */
export async function firstDelivery(tx: Tx, eventId: string, type: string): Promise<boolean> {
  return (await tx.$executeRawUnsafe('INSERT INTO processor_events (id, type) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING', eventId, type)) === 1;
}

/** Accounts with a paid subscription (the meter reporter's work list). */
export const subscribedAccounts = (db: Db): Promise<AccountRow[]> => db.billingAccount.findMany({ where: { subscriptionId: { not: null }, customerId: { not: null } } });
