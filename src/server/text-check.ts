import type { FastifyInstance } from 'fastify';
import { KeelError } from '../platform/errors';

/**
 * The path of the first string in `value` that holds U+0000 (`name`, `assets.0.recipient`), or
 * undefined. Walks with its own stack, so a deeply nested body cannot exhaust the call stack.
 */
export function pathOfNulText(value: unknown): string | undefined {
  const stack: [unknown, string][] = [[value, '']];
  while (stack.length) {
    const [v, path] = stack.pop()!;
    if (typeof v === 'string') {
      if (v.includes('\0')) return path || 'value';
    } else if (v !== null && typeof v === 'object') {
      for (const [key, child] of Object.entries(v)) stack.push([child, path ? `${path}.${key}` : key]);
    }
  }
  return undefined;
}

/**
 * Refuses a request whose path, query or body holds U+0000 in a string with 422 naming the field:
 * PostgreSQL text cannot store that character, so it would otherwise fail deep inside a write.
 * Registered before the idempotency guard, so such a request claims no key.
 */
export function registerTextCheck(app: FastifyInstance): void {
  app.addHook('preHandler', (request, _reply, done) => {
    const field = pathOfNulText(request.params) ?? pathOfNulText(request.query) ?? pathOfNulText(request.body);
    done(field === undefined ? undefined : KeelError.invalidField(field, 'must not contain the NUL character (U+0000)'));
  });
}
