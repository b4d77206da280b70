/** The realtime feeds' vocabulary; realtime.types.ts registers it for GraphQL. */
export const BookMessageKind = {
  SNAPSHOT: 'SNAPSHOT',
  UPDATE: 'UPDATE',
} as const;
export type BookMessageKind = (typeof BookMessageKind)[keyof typeof BookMessageKind];
