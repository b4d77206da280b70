import type { DepthLevel, RestingOrder, Side } from './types';

/** A resting order: a node in its price level's FIFO list. */
export class OrderNode {
  prev: OrderNode | null = null;
  next: OrderNode | null = null;
  level: PriceLevel | null = null;
  constructor(
    readonly id: string,
    /** hashOf(id), kept for the order index. */
    readonly hash: number,
    readonly owner: string,
    readonly side: Side,
    readonly price: number,
    public remaining: number,
  ) {}
}

export class PriceLevel {
  head: OrderNode | null = null;
  tail: OrderNode | null = null;
  quantity = 0;
  count = 0;
  constructor(readonly price: number) {}
}

/**
 * One side of a book. Levels sit in an array sorted so that the best price is LAST (bids
 * ascending, asks descending): taking and adding near the touch touch the end of the array.
 */
export class BookSide {
  readonly levels: PriceLevel[] = [];
  private readonly byPrice = new Map<number, PriceLevel>();

  constructor(readonly side: Side) {}

  best(): PriceLevel | undefined {
    return this.levels[this.levels.length - 1];
  }

  /** Whether a is a better price than b for this side. */
  better(a: number, b: number): boolean {
    return this.side === 'BUY' ? a > b : a < b;
  }

  append(node: OrderNode): void {
    let level = this.byPrice.get(node.price);
    if (!level) {
      level = new PriceLevel(node.price);
      this.byPrice.set(node.price, level);
      this.levels.splice(this.insertionIndex(node.price), 0, level);
    }
    node.level = level;
    node.prev = level.tail;
    node.next = null;
    if (level.tail) level.tail.next = node;
    else level.head = node;
    level.tail = node;
    level.quantity += node.remaining;
    level.count++;
  }

  remove(node: OrderNode): void {
    const level = node.level!;
    if (node.prev) node.prev.next = node.next;
    else level.head = node.next;
    if (node.next) node.next.prev = node.prev;
    else level.tail = node.prev;
    level.quantity -= node.remaining;
    level.count--;
    node.level = node.prev = node.next = null;
    if (level.count === 0) this.dropLevel(level);
  }

  /** Orders in priority order, best level first. */
  *orders(): Generator<OrderNode> {
    for (let i = this.levels.length - 1; i >= 0; i--) {
      for (let n = this.levels[i].head; n; n = n.next) yield n;
    }
  }

  levelAt(price: number): { quantity: number; orders: number } {
    const l = this.byPrice.get(price);
    return l ? { quantity: l.quantity, orders: l.count } : { quantity: 0, orders: 0 };
  }

  depth(maxLevels: number): DepthLevel[] {
    const out: DepthLevel[] = [];
    for (let i = this.levels.length - 1; i >= 0 && out.length < maxLevels; i--) {
      const l = this.levels[i];
      out.push({ price: l.price, quantity: l.quantity, orders: l.count });
    }
    return out;
  }

  snapshot(): RestingOrder[] {
    const out: RestingOrder[] = [];
    for (const n of this.orders()) out.push({ id: n.id, owner: n.owner, side: n.side, price: n.price, remaining: n.remaining });
    return out;
  }

  private dropLevel(level: PriceLevel): void {
    this.byPrice.delete(level.price);
    const last = this.levels.length - 1;
    if (this.levels[last] === level) this.levels.pop();
    else this.levels.splice(this.indexOf(level.price), 1);
  }

  /** First index whose price is not worse-ordered than `price` (binary search). */
  private insertionIndex(price: number): number {
    let lo = 0;
    let hi = this.levels.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.better(price, this.levels[mid].price)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private indexOf(price: number): number {
    const i = this.insertionIndex(price);
    return this.levels[i]?.price === price ? i : this.levels.findIndex((l) => l.price === price);
  }
}
