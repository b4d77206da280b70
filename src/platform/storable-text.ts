import type { FieldError } from './errors';

/** Why PostgreSQL cannot store `text`, or undefined. */
export function unstorable(text: string): string | undefined {
  if (text.includes('\0')) return 'must not contain the NUL character (U+0000)';
  // A lone surrogate ("\ud800"): jsonb refuses its escape, and text would store U+FFFD in its place.
  if (!text.isWellFormed()) return 'must be well-formed Unicode (no lone surrogate such as \\ud800)';
  return undefined;
}

/**
 * `text` from outside (a receiver's answer, a peer's error) made storable: each NUL and each lone
 * surrogate becomes U+FFFD, so recording it cannot fail the write that carries it.
 */
export function storable(text: string): string {
  return text.replaceAll('\0', '\uFFFD').toWellFormed();
}

/** Why a value nests too deep: the code that copies and stores it (objection's clone) recurses. */
export function tooDeep(maxDepth: number): string {
  return `must not nest objects and arrays more than ${maxDepth} deep`;
}

/**
 * The first string in `value`, an object key or a value, that PostgreSQL cannot store, or the first
 * object or array nested deeper than `maxDepth` (`value` itself, when an object, is depth 1), named
 * by its path (`name`, `assets.0.recipient`, `metadata.<key>`), or undefined. Walks with its own
 * stack, so a deeply nested body cannot exhaust the call stack.
 */
export function unstorableInput(value: unknown, maxDepth = Infinity): FieldError | undefined {
  const stack: [unknown, string, number][] = [[value, '', 0]];
  while (stack.length) {
    const [v, path, depth] = stack.pop()!;
    if (typeof v === 'string') {
      const error = unstorable(v);
      if (error) return { field: path || 'value', error };
    } else if (v !== null && typeof v === 'object') {
      if (depth >= maxDepth) return { field: path || 'value', error: tooDeep(maxDepth) };
      for (const [key, child] of Object.entries(v)) {
        const field = path ? `${path}.${key}` : key;
        const error = unstorable(key);
        if (error) return { field, error: `the key ${error}` };
        stack.push([child, field, depth + 1]);
      }
    }
  }
  return undefined;
}
