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
