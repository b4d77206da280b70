import type { Knex } from 'knex';
import { KeelError } from '../../platform/errors';

/**
 * Records that `organizationId` uses `slug` (payment_link_slugs), inside the caller's transaction,
 * or refuses it (409 DUPLICATE_ENTRY, as for any slug taken) when another organisation ever used
 * it: a payer holding an old link or QR code must never pay someone else. The organisation's own
 * old slugs stay its own to use again. Two organisations claiming one slug at once: the second
 * waits on the first's row and is refused once it commits.
 */
export async function claimSlug(trx: Knex.Transaction, organizationId: string, slug: string): Promise<void> {
  await trx.raw('INSERT INTO payment_link_slugs (slug, organization_id) VALUES (?, ?) ON CONFLICT (slug) DO NOTHING', [slug, organizationId]);
  const owner = await trx('payment_link_slugs').where({ slug }).first('organizationId');
  if (owner?.organizationId !== organizationId) throw slugTaken(slug);
}

export function slugTaken(slug: string): KeelError {
  return new KeelError('DUPLICATE_ENTRY', `The slug ${slug} is taken`, { fields: [{ field: 'slug', error: 'is taken' }] });
}
