import type { RealtimeBus } from '../../platform/events/realtime-bus';
import type { CommittedChange } from '../orders';

type Listener = (change: CommittedChange) => void;

/**
 * This node's end of the realtime bus. Commits made here are published after they commit (on the
 * next turn of the event loop, in commit order, never awaited); every node's commits arrive here,
 * are parsed once, and go to the feeds of their market and of the organisations they concern.
 */
export class RealtimeHub {
  private readonly byMarket = new Map<string, Set<Listener>>();
  private readonly byOrganization = new Map<string, Set<Listener>>();
  private outgoing: CommittedChange[] = [];
  private stopListening?: () => void;

  constructor(private readonly bus: RealtimeBus) {}

  /** Queues a commit of this node for publication: the commit path pays only for the push. */
  publish = (change: CommittedChange): void => {
    if (this.outgoing.push(change) === 1) setImmediate(() => this.flush());
  };

  private flush(): void {
    const batch = this.outgoing;
    this.outgoing = [];
    for (const change of batch) this.bus.publish(JSON.stringify(change));
  }

  onMarket(marketId: string, listener: Listener): () => void {
    return this.add(this.byMarket, marketId, listener);
  }

  onOrganization(organizationId: string, listener: Listener): () => void {
    return this.add(this.byOrganization, organizationId, listener);
  }

  /** Calls `listener` each time this node hears the bus again after losing it (what was published meanwhile is lost here). */
  onResumed(listener: () => void): () => void {
    this.listen();
    return this.bus.onResumed(listener);
  }

  /** Resolves once this node hears the bus. */
  ready(): Promise<void> {
    this.listen();
    return this.bus.ready();
  }

  private add(map: Map<string, Set<Listener>>, key: string, listener: Listener): () => void {
    this.listen();
    let set = map.get(key);
    if (!set) map.set(key, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && map.get(key) === set) map.delete(key);
    };
  }

  private listen(): void {
    this.stopListening ??= this.bus.onMessage((message) => this.dispatch(message));
  }

  private dispatch(message: string): void {
    // Every node hears every commit, its own included: with no feed open here, none is read.
    if (this.byMarket.size === 0 && this.byOrganization.size === 0) return;
    let change: CommittedChange;
    try {
      change = JSON.parse(message) as CommittedChange;
    } catch {
      return;
    }
    for (const l of this.byMarket.get(change.marketId) ?? []) deliver(l, change);
    if (this.byOrganization.size === 0) return;
    const organizations = new Set<string>();
    for (const o of change.orders) organizations.add(o.organizationId);
    for (const b of change.balances) organizations.add(b.organizationId);
    for (const id of organizations) for (const l of this.byOrganization.get(id) ?? []) deliver(l, change);
  }
}

/** One feed's failure must not keep the change from the others. */
function deliver(listener: Listener, change: CommittedChange): void {
  try {
    listener(change);
  } catch {
    // the feed resynchronises on its next change
  }
}

/** One function that stops every listener given (a feed's change and resume listeners). */
export function stopAll(...stops: (() => void)[]): () => void {
  return () => {
    for (const stop of stops) stop();
  };
}
