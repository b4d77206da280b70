import type { Envelope } from './route-table';
import type { PageResult } from '../src/platform/paging';

/** Shapes a GraphQL result into the spec's REST envelope. */
export function envelope(kind: Envelope, value: unknown): unknown {
  switch (kind) {
    case 'single':
      return { data: value };
    case 'coreList': {
      const page = value as PageResult<unknown>;
      return { data: page.items, total: page.total, hasMore: page.hasMore };
    }
    case 'proList': {
      const page = value as PageResult<unknown>;
      return { data: page.items, meta: { total: page.total, limit: page.limit, offset: page.offset } };
    }
    case 'dataWithMessage': {
      const v = value as { data: unknown; message: string };
      return { data: v.data, message: v.message };
    }
    case 'raw':
      return value;
  }
}
