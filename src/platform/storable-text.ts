import type { FieldError } from './errors';

/** Why PostgreSQL cannot store `text`, or undefined. */
export function unstorable(text: string): string | undefined {
  if (text.includes('\0')) return 'must not contain the NUL character (U+0000)';
  // A lone surrogate ("\ud800"): jsonb refuses its escape, and text would store U+FFFD in its place.
  if (!text.isWellFormed()) return 'must be well-formed Unicode (no lone surrogate such as \\ud800)';
  return undefined;
}

/**
 * The first string in `value`, an object key or a value, that PostgreSQL cannot store, named by its
 * path (`name`, `assets.0.recipient`, `metadata.<key>`), or undefined. Walks with its own stack, so a
 * deeply nested body cannot exhaust the call stack.
 */
export function unstorableText(value: unknown): FieldError | undefined {
  const stack: [unknown, string][] = [[value, '']];
  while (stack.length) {
    const [v, path] = stack.pop()!;
    if (typeof v === 'string') {
      const error = unstorable(v);
      if (error) return { field: path || 'value', error };
    } else if (v !== null && typeof v === 'object') {
      for (const [key, child] of Object.entries(v)) {
        const field = path ? `${path}.${key}` : key;
        const error = unstorable(key);
        if (error) return { field, error: `the key ${error}` };
        stack.push([child, field]);
      }
    }
  }
  return undefined;
}
