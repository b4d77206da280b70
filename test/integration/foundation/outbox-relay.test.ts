import { useTestKeel } from '../../support/use-test-keel';
import { eventually } from '../../support/eventually';

// Polling ten minutes apart: only PostgreSQL's notification of a commit can move an event within the test.
const { t } = useTestKeel({ KEEL_ROLES: 'api,worker', OUTBOX_POLL_INTERVAL_MS: 600_000, OUTBOX_LISTENING_POLL_INTERVAL_MS: 600_000 });

const publish = (type: string) => t.keel.platform.db.transaction((trx) => t.keel.platform.outbox.publish(trx, { organizationId: null, type, data: {} }));
const dispatched = async (ids: string[]) => (await t.keel.platform.db('outbox_events').whereIn('id', ids).whereNotNull('dispatchedAt')).length === ids.length;

test('an event is relayed as soon as its transaction commits, not at the next look', async () => {
  const { id } = await publish('master.created');
  await eventually(() => dispatched([id]), 5_000);
});

test('events committed while a batch is being relayed are relayed right after it', async () => {
  const ids = (await Promise.all(Array.from({ length: 60 }, () => publish('master.updated')))).map((e) => e.id);
  await eventually(() => dispatched(ids), 5_000);
});

test('a notification lost while the session reconnects is made up for when it is back', async () => {
  const { db, session } = t.keel.platform;
  await db.raw(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'keel-session-holder' AND datname = current_database()`);
  await eventually(() => !session.listening, 5_000);
  // Committed while nobody listens: its notification reaches no one.
  const { id } = await publish('master.archived');
  await eventually(() => session.listening, 10_000);
  await eventually(() => dispatched([id]), 5_000);
});
