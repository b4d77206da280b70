import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { getIntrospectionQuery, parse } from 'graphql';
import { buildHostSchema } from '../../../src/schema';
import { queryLimitRules, validateWithLimits } from '../../../src/graphql-kit/query-limits';
import { loadConfig } from '../../../src/platform/config';
import { compileRoute } from '../../../rest-compat/compile';
import { coreRoutes } from '../../../rest-compat/routes/core';
import { orderbookRoutes } from '../../../rest-compat/routes/orderbook';
import { useTestKeel } from '../../support/use-test-keel';
import { eventually } from '../../support/eventually';
import { RawRealtimeSocket } from '../../support/realtime-client';

const { t, orgs: [org] } = useTestKeel({ GRAPHQL_MAX_DEPTH: 3, GRAPHQL_MAX_ALIASES: 2, GRAPHQL_MAX_COST: 40, WS_MAX_SUBSCRIPTIONS_PER_CONNECTION: 2, OUTBOX_POLL_INTERVAL_MS: 20 }, { orgs: 1 });

const aliased = (n: number) => `{ ${Array.from({ length: n }, (_, i) => `k${i}: apiKeys { total }`).join(' ')} }`;

test('a document over the alias limit is refused with 400 before any resolver runs', async () => {
  expect((await org.core.graphql(aliased(2))).status).toBe(200);
  const res = await org.core.graphql(aliased(3));
  expect(res.status).toBe(400);
  expect(res.body.data).toBeUndefined();
  expect(res.body.errors[0].message).toMatch(/aliases/i);
  expect(res.body.errors[0].extensions).toMatchObject({ code: 'BAD_REQUEST', requestId: expect.any(String) });
});

test('a document nested deeper than the limit is refused', async () => {
  expect((await org.core.graphql('{ apiKeys { items { id } } }')).status).toBe(200);
  const res = await org.core.graphql('{ apiKeys { items { id } } organization { id } assets { items { blockchain { id } } } }');
  expect(res.status).toBe(400);
  expect(res.body.errors[0].message).toMatch(/depth/i);
});

test('a document whose cost is over the limit is refused', async () => {
  const res = await org.core.graphql('{ organization { id name tier proAccess createdAt updatedAt } apiKeys { total limit offset hasMore items { id name host environment scopes tier prefix status lastRotatedAt revokedAt createdAt updatedAt } } }');
  expect(res.status).toBe(400);
  expect(res.body.errors[0].message).toMatch(/cost/i);
});

test('an oversized document stops being parsed at the token limit', async () => {
  const res = await org.core.graphql(`{ ${'organization { id } '.repeat(6_000)}}`);
  expect(res.status).toBe(400);
  expect(res.body.errors[0].message).toMatch(/tokens/i);
});

test('the same limits apply to subscriptions over graphql-ws', async () => {
  const client = createClient({ url: `${t.coreUrl.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, connectionParams: { apiKey: org.adminKey, orgId: org.orgId }, retryAttempts: 0, lazyCloseTimeout: 0 });
  try {
    const outcome = await new Promise<unknown>((resolve) => {
      client.subscribe({ query: 'subscription { a: events { id } b: events { id } c: events { id } }' }, { next: resolve, error: resolve, complete: () => undefined });
    });
    expect(JSON.stringify(outcome)).toMatch(/aliases/i);
  } finally {
    await client.dispose();
  }
});

test('one graphql-ws connection holds at most the configured number of live subscriptions', async () => {
  const client = createClient({ url: `${t.coreUrl.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, connectionParams: { apiKey: org.adminKey, orgId: org.orgId }, retryAttempts: 0 });
  const subscribe = () => {
    const received: unknown[] = [];
    const outcome: { error?: unknown } = {};
    const stop = client.subscribe({ query: 'subscription { events { id } }' }, { next: (v) => received.push(v), error: (e) => (outcome.error = e), complete: () => undefined });
    return { received, outcome, stop };
  };
  try {
    const [first] = [subscribe(), subscribe()];
    const third = subscribe();
    await eventually(() => third.outcome.error !== undefined);
    expect(JSON.stringify(third.outcome.error)).toContain('RATE_LIMIT_EXCEEDED');

    first.stop();
    const fourth = subscribe();
    const { db, outbox } = t.keel.platform;
    // Published until the fourth (admitted once the first completed) sees one: it may start listening after the first.
    await eventually(async () => {
      await db.transaction((trx) => outbox.publish(trx, { organizationId: org.orgId, type: 'master.created', data: {} }));
      return fourth.received.length > 0;
    });
    expect(fourth.outcome.error).toBeUndefined();
  } finally {
    await client.dispose();
  }
});

/** `levels` arrays nested in each other around one string, as JSON text (deeper than JSON.stringify could write). */
const nestedJson = (levels: number) => `${'['.repeat(levels)}"x"${']'.repeat(levels)}`;

/** A socket that answers: a subscription the organisation's next event reaches is delivered on it. */
async function expectServing(socket: RawRealtimeSocket, id: string): Promise<void> {
  const answer = socket.subscribeRaw(id, JSON.stringify({ query: 'subscription { events { id } }' }));
  let answered: { type: string } | undefined;
  void answer.then((a) => (answered = a));
  const { db, outbox } = t.keel.platform;
  await eventually(async () => {
    await db.transaction((trx) => outbox.publish(trx, { organizationId: org.orgId, type: 'master.created', data: {} }));
    return answered !== undefined;
  });
  expect(answered!.type).toBe('next');
  expect(socket.closed).toBeUndefined();
}

test("a graphql-ws subscribe message's variables are checked as a POST /graphql body's are: nested too deep or holding U+0000, they get an INVALID_FIELD error naming the field, and the socket stays open", async () => {
  const query = 'subscription($types: [String!]) { events(types: $types) { id } }';
  const http = await org.core.post('/graphql', { query, variables: { types: JSON.parse(nestedJson(40)) } });
  expect(http.status).toBe(422);
  const socket = new RawRealtimeSocket(t.coreUrl, { apiKey: org.adminKey, orgId: org.orgId });
  await socket.ready();
  try {
    const deep = await socket.subscribeRaw('deep', `{"query":${JSON.stringify(query)},"variables":{"types":${nestedJson(40)}}}`);
    expect(deep.type).toBe('error');
    expect(deep.payload[0].extensions).toMatchObject({ code: 'INVALID_FIELD', status: 422, details: http.body.errors[0].extensions.details });

    // An unused variable too, however deep: nothing of Keel's may have to walk it.
    const deepest = await socket.subscribeRaw('deepest', `{"query":"subscription { events { id } }","variables":{"unused":${nestedJson(100_000)}}}`);
    expect(deepest.type).toBe('error');
    expect(deepest.payload[0].extensions.code).toBe('INVALID_FIELD');
    expect(deepest.payload[0].message).toMatch(/^variables\.unused\.0\.0.*: must not nest objects and arrays more than 32 deep$/);

    const nul = await socket.subscribeRaw('nul', JSON.stringify({ query, variables: { types: ['a\u0000b'] } }));
    expect(nul.type).toBe('error');
    expect(nul.payload[0].extensions).toMatchObject({
      code: 'INVALID_FIELD',
      details: { fields: [{ field: 'variables.types.0', error: 'must not contain the NUL character (U+0000)' }] },
    });

    await expectServing(socket, 'after');
  } finally {
    socket.ws.close();
  }
});

test('a document nested deeper than the parser can follow is refused with BAD_REQUEST over HTTP and over graphql-ws alike; the socket stays open', async () => {
  const levels = 5_000;
  const selections = `${'organization { '.repeat(levels)}id${' }'.repeat(levels)}`;
  const http = await org.core.graphql(`{ ${selections} }`);
  expect(http.status).toBe(400);
  expect(http.body.errors).toHaveLength(1);
  expect(http.body.errors[0].extensions).toMatchObject({ code: 'BAD_REQUEST', status: 400 });
  expect(http.body.errors[0].message).toMatch(/nest/i);
  const lists = await org.core.graphql(`subscription { events(types: ${'['.repeat(levels)}"x"${']'.repeat(levels)}) { id } }`);
  expect(lists.status).toBe(400);
  expect(lists.body.errors[0].message).toBe(http.body.errors[0].message);

  const socket = new RawRealtimeSocket(t.coreUrl, { apiKey: org.adminKey, orgId: org.orgId });
  await socket.ready();
  try {
    const deep = await socket.subscribeRaw('deep', JSON.stringify({ query: `subscription { ${selections.replace(/organization/g, 'events')} }` }));
    expect(deep.type).toBe('error');
    expect(deep.payload).toEqual([{ message: http.body.errors[0].message, extensions: expect.objectContaining({ code: 'BAD_REQUEST', status: 400 }) }]);
    const deepList = await socket.subscribeRaw('deep-list', JSON.stringify({ query: `subscription { events(types: ${'['.repeat(levels)}"x"${']'.repeat(levels)}) { id } }` }));
    expect(deepList.type).toBe('error');
    expect(deepList.payload[0].message).toBe(http.body.errors[0].message);

    await expectServing(socket, 'after');
  } finally {
    socket.ws.close();
  }
  expect((await org.core.graphql('{ organization { id } }')).status).toBe(200);
});

test('with the default limits, every operation the REST shim runs, and the introspection query tools send, would pass', async () => {
  const config = loadConfig({});
  const validateDocument = validateWithLimits(queryLimitRules({ maxDepth: config.GRAPHQL_MAX_DEPTH, maxAliases: config.GRAPHQL_MAX_ALIASES, maxCost: config.GRAPHQL_MAX_COST }));
  for (const [host, rows] of [['core', coreRoutes], ['pro', orderbookRoutes]] as const) {
    const schema = await buildHostSchema(host);
    for (const row of rows) {
      const { document } = compileRoute(schema, row);
      expect({ route: `${row.method} ${row.path}`, errors: validateDocument(schema, document).map((e) => e.message) }).toEqual({ route: `${row.method} ${row.path}`, errors: [] });
    }
    expect(validateDocument(schema, parse(getIntrospectionQuery({ descriptions: true, inputValueDeprecation: true })))).toEqual([]);
  }
});
