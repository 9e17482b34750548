import { AppError, notFound } from '@sigil/kit/errors';
import type { RecordTemplateUse, TemplateField, TemplateVersionSnapshot } from '@sigil/proto/internal-templates';
import type { Db, Tx } from '../db.ts';
import type { FileStore } from '../files/storage.ts';
import { insertTemplateUsage } from '../jobs/template-usage.ts';

/** A version reference of the internal contract: a positive number or `latest` (never the draft). */
export function parseVersionRef(value: unknown, pointer: string): number | 'latest' {
  if (value === 'latest') return 'latest';
  const number = typeof value === 'number' ? value : typeof value === 'string' && /^[1-9][0-9]{0,8}$/.test(value) ? Number(value) : NaN;
  if (!Number.isInteger(number) || number < 1) throw new AppError('validation-failed', `${pointer.replace('/body/', '')} must be a published version number or "latest".`, { errors: [{ pointer, detail: 'must be a published version number or "latest"' }] });
  return number;
}

const USED_BY_ID = /^(env|lnk)_[A-Za-z0-9]{10,40}$/;

export function parseRecordTemplateUse(body: unknown): RecordTemplateUse {
  const input = (body ?? {}) as { version?: unknown; usedBy?: { kind?: unknown; id?: unknown } };
  const version = parseVersionRef(input.version, '/body/version');
  const kind = input.usedBy?.kind;
  const id = input.usedBy?.id;
  if (kind !== 'envelope' && kind !== 'signing_link') throw new AppError('validation-failed', 'usedBy.kind must be envelope or signing_link.', { errors: [{ pointer: '/body/usedBy/kind', detail: 'must be envelope or signing_link' }] });
  if (typeof id !== 'string' || !USED_BY_ID.test(id)) throw new AppError('validation-failed', 'usedBy.id must be an envelope or signing link id.', { errors: [{ pointer: '/body/usedBy/id', detail: 'must be an env_ or lnk_ id' }] });
  return { version, usedBy: { kind, id } };
}

/** Published versions for other services: snapshots, recorded uses, the version's PDF (proto/src/internal-templates.ts). */
export function createTemplateUses({ db, store }: { db: Db; store: FileStore }) {
  async function snapshot(conn: Db | Tx, organizationId: string, templateId: string, ref: number | 'latest'): Promise<TemplateVersionSnapshot> {
    const template = await conn.template.findFirst({ where: { id: templateId, organizationId } });
    if (!template) throw notFound(`Template ${templateId}`);
    const version = await conn.templateVersion.findFirst({
      where: { templateId, ...(ref === 'latest' ? { number: { not: null } } : { number: ref }) },
      orderBy: { number: 'desc' },
      include: { file: true },
    });
    if (!version?.number || !version.file || !version.publishedAt) throw notFound(`Version ${ref} of template ${templateId}`);
    return {
      templateId,
      templateName: template.name,
      version: version.number,
      roles: version.roles as unknown as TemplateVersionSnapshot['roles'],
      fields: version.fields as unknown as TemplateField[],
      variables: version.variables as unknown as TemplateVersionSnapshot['variables'],
      pageCount: version.file.pageCount,
      pages: version.file.pages as TemplateVersionSnapshot['pages'],
      sha256: version.file.sha256,
      publishedAt: version.publishedAt.toISOString(),
    };
  }

  return {
    version: (organizationId: string, templateId: string, ref: number | 'latest') => snapshot(db, organizationId, templateId, ref),

    /** Records the use under a lock on the template's row, so a delete at the same time either wins first or sees it. */
    async use(organizationId: string, templateId: string, use: RecordTemplateUse): Promise<TemplateVersionSnapshot> {
      return db.$transaction(async (tx) => {
        const locked = await tx.$queryRawUnsafe<unknown[]>('SELECT 1 FROM templates WHERE id = $1 AND organization_id = $2 FOR UPDATE', templateId, organizationId);
        if (locked.length === 0) throw notFound(`Template ${templateId}`);
        const found = await snapshot(tx, organizationId, templateId, use.version);
        await insertTemplateUsage(tx, { templateId, organizationId, kind: use.usedBy.kind, id: use.usedBy.id, at: new Date() });
        return found;
      });
    },

    async document(organizationId: string, templateId: string, ref: number | 'latest'): Promise<Buffer> {
      const { version: number } = await snapshot(db, organizationId, templateId, ref);
      const version = await db.templateVersion.findFirstOrThrow({ where: { templateId, number }, include: { file: true } });
      return store.get((version.file as { storageKey: string }).storageKey);
    },
  };
}

export type TemplateUses = ReturnType<typeof createTemplateUses>;
