import { classify, statusOf } from '../../../src/modules/checkout/checkout-status';
import type { CheckoutStatus } from '../../../src/modules/checkout/checkout.model';

const NOW = new Date('2026-05-01T12:00:00Z');
const LATER = new Date('2026-05-01T12:15:00Z');
const EARLIER = new Date('2026-05-01T11:45:00Z');

function checkout(over: Partial<{ status: CheckoutStatus; receivedRaw: string; confirmingRaw: string; seenRaw: string; expiresAt: Date }> = {}) {
  return { status: 'AWAITING_PAYMENT' as CheckoutStatus, expectedRaw: '1000', receivedRaw: '0', confirmingRaw: '0', seenRaw: '0', expiresAt: LATER, ...over };
}

describe('the status a checkout is in', () => {
  test.each([
    ['nothing seen', {}, 'AWAITING_PAYMENT'],
    ['funds at the head', { seenRaw: '1000' }, 'DETECTED'],
    ['a payment confirming', { seenRaw: '1000', confirmingRaw: '1000' }, 'CONFIRMING'],
    ['a top-up confirming after an underpayment', { receivedRaw: '400', confirmingRaw: '600' }, 'CONFIRMING'],
    ['exactly the amount', { receivedRaw: '1000' }, 'PAID'],
    ['more than the amount', { receivedRaw: '1001' }, 'OVERPAID'],
    ['less than the amount', { receivedRaw: '999' }, 'UNDERPAID'],
    ['less than the amount, after the expiry', { receivedRaw: '999', expiresAt: EARLIER }, 'UNDERPAID'],
    ['nothing counted by the expiry', { expiresAt: EARLIER }, 'EXPIRED'],
    ['detected but never recorded by the expiry', { seenRaw: '1000', expiresAt: EARLIER }, 'EXPIRED'],
    ['a payment mined in time but recorded after the expiry', { status: 'EXPIRED' as CheckoutStatus, confirmingRaw: '1000', expiresAt: EARLIER }, 'CONFIRMING'],
    ['cancelled, whatever arrives', { status: 'CANCELLED' as CheckoutStatus, receivedRaw: '1000' }, 'CANCELLED'],
  ])('%s', (_name, over, expected) => {
    expect(statusOf(checkout(over), NOW)).toBe(expected);
  });
});

describe('what a deposit to a checkout address is', () => {
  test.each([
    ['before the expiry', {}, NOW, 'PAYMENT'],
    ['mined exactly at the expiry', {}, LATER, 'PAYMENT'],
    ['mined after the expiry', {}, new Date(LATER.getTime() + 1000), 'LATE'],
    ['to an expired checkout, mined in time', { status: 'EXPIRED' as CheckoutStatus }, NOW, 'PAYMENT'],
    ['a top-up to an underpaid checkout', { status: 'UNDERPAID' as CheckoutStatus }, NOW, 'PAYMENT'],
    ['after it was paid', { status: 'PAID' as CheckoutStatus }, NOW, 'REPEAT'],
    ['after it was overpaid', { status: 'OVERPAID' as CheckoutStatus }, NOW, 'REPEAT'],
    ['after a cancellation', { status: 'CANCELLED' as CheckoutStatus }, NOW, 'LATE'],
  ])('%s', (_name, over, blockTime, expected) => {
    expect(classify(checkout(over), blockTime)).toBe(expected);
  });
});
