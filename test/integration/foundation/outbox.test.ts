import { useTestKeel } from '../../support/use-test-keel';

const { t } = useTestKeel({ KEEL_ROLES: 'api' }); // no worker: rows stay undispatched for inspection

test('publish writes the spec envelope in the caller transaction', async () => {
  const org = await t.createOrg();
  const { db, outbox } = t.keel.platform;
  const envelope = await db.transaction((trx) => outbox.publish(trx, { organizationId: org.orgId, type: 'master.created', data: { id: 'w1' } }));
  expect(envelope).toMatchObject({ type: 'master.created', version: '1.0', environment: 'sandbox', data: { id: 'w1' } });
  const row = await db('outbox_events').where({ id: envelope.id }).first();
  expect(row.envelope).toEqual(envelope);
  expect(row.dispatchedAt).toBeNull();
});

test('an event of a rolled-back transaction never exists', async () => {
  const { db, outbox } = t.keel.platform;
  let id = '';
  await expect(
    db.transaction(async (trx) => {
      id = (await outbox.publish(trx, { organizationId: null, type: 'master.updated', data: {} })).id;
      throw new Error('rollback');
    }),
  ).rejects.toThrow('rollback');
  expect(await db('outbox_events').where({ id }).first()).toBeUndefined();
});
