import type { RealtimeHub } from '../../../src/modules/realtime/realtime-hub';
import type { CommittedChange } from '../../../src/modules/orders/committed-change';

/** A hub that hands a feed whatever changes the test sends, and tells it when the bus is heard again (`resume`). */
export function fakeHub(): { hub: RealtimeHub; send(change: CommittedChange): void; resume(): void } {
  let listener: (c: CommittedChange) => void = () => undefined;
  let resumed: () => void = () => undefined;
  const listen = (l: (c: CommittedChange) => void) => {
    listener = l;
    return () => undefined;
  };
  const h = {
    onMarket: (_id: string, l: (c: CommittedChange) => void) => listen(l),
    onOrganization: (_id: string, l: (c: CommittedChange) => void) => listen(l),
    onResumed: (l: () => void) => {
      resumed = l;
      return () => undefined;
    },
  };
  return { hub: h as unknown as RealtimeHub, send: (c) => listener(c), resume: () => resumed() };
}
