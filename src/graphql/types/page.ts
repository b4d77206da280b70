import { Max, Min } from 'class-validator';
import { ArgsType, ClassType, Field, Int, ObjectType } from 'type-graphql';
import { DateRangeArgs } from './date-range';

/** Offset paging, with the spec's bounds: limit 1..100 (default 50), offset >= 0 (default 0), and the date range. */
@ArgsType()
export class PageArgs extends DateRangeArgs {
  @Field(() => Int, { defaultValue: 50 })
  @Min(1)
  @Max(100)
  limit: number = 50;

  @Field(() => Int, { defaultValue: 0 })
  @Min(0)
  offset: number = 0;
}

export interface PageResult<T> {
  items: T[];
  total: number;
  hasMore: boolean;
  limit: number;
  offset: number;
}

/** A page of T; the REST shim reshapes it into the core or order-book list envelope. */
export function Page<T extends object>(itemType: ClassType<T>) {
  @ObjectType({ simpleResolvers: true })
  abstract class PageClass implements PageResult<T> {
    @Field(() => [itemType])
    items!: T[];

    @Field(() => Int)
    total!: number;

    @Field()
    hasMore!: boolean;

    @Field(() => Int)
    limit!: number;

    @Field(() => Int)
    offset!: number;
  }
  return PageClass;
}

export function toPage<T>(items: T[], total: number, page: PageArgs): PageResult<T> {
  return { items, total, hasMore: page.offset + items.length < total, limit: page.limit, offset: page.offset };
}
