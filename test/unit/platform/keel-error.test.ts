import { GraphQLError } from 'graphql';
import { ethers } from 'ethers';
import { toKeelError } from '../../../src/graphql-kit/errors';
import { KeelError } from '../../../src/platform/errors';

test("a refusal of the caller's request (4xx) carries no stack frames, a server error keeps them", () => {
  const limit = Error.stackTraceLimit;
  const refused = KeelError.notFound('Wallet');
  const failed = new KeelError('INTERNAL_ERROR', 'broke');
  expect(refused.stack).not.toMatch(/\n\s+at /);
  expect(failed.stack).toMatch(/\n\s+at /);
  expect([refused.status, refused.code, refused.message]).toEqual([404, 'NOT_FOUND', 'Wallet not found']);
  expect(Error.stackTraceLimit).toBe(limit);
  // An explicit 5xx status on a 4xx code keeps the stack too.
  expect(new KeelError('CONFLICT', 'x', undefined, 503).stack).toMatch(/\n\s+at /);
});

test("a chain's node that did not answer is the caller's 502 UPSTREAM_ERROR; a node's refusal or a bug is not", () => {
  const asKeel = (e: unknown) => toKeelError(new GraphQLError('resolver failed', { originalError: e as Error }));
  for (const code of ['TIMEOUT', 'NETWORK_ERROR', 'SERVER_ERROR'] as const) expect(asKeel(ethers.makeError('no answer', code))).toMatchObject({ code: 'UPSTREAM_ERROR', status: 502 });
  expect(asKeel(ethers.makeError('execution reverted', 'CALL_EXCEPTION'))).toMatchObject({ code: 'INTERNAL_ERROR' });
  expect(asKeel(new TypeError('undefined is not a function'))).toMatchObject({ code: 'INTERNAL_ERROR', status: 500 });
});
