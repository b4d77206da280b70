import { classify, holdsPayment, lateCause, paymentAdmitted, SIGHTING_GRACE_MS, statusOf, whyNotCounted } from '../../../src/modules/checkout/checkout-status';
import type { CheckoutStatus } from '../../../src/modules/checkout/checkout.domain';

const NOW = new Date('2026-05-01T12:00:00Z');
const LATER = new Date('2026-05-01T12:15:00Z');
const EARLIER = new Date('2026-05-01T11:45:00Z');

const CHAIN_A = 'chain-a';
const CHAIN_B = 'chain-b';
const USDC_A = 'usdc-on-a';
const DAI_A = 'dai-on-a';
const USDC_B = 'usdc-on-b';

function checkout(over: Partial<{ status: CheckoutStatus; receivedRaw: string; confirmingRaw: string; seenRaw: string; expiresAt: Date }> = {}) {
  return { status: 'AWAITING_PAYMENT' as CheckoutStatus, expectedRaw: '1000', receivedRaw: '0', confirmingRaw: '0', seenRaw: '0', expiresAt: LATER, blockchainId: CHAIN_A, assetId: USDC_A, ...over };
}

/** A deposit of the checkout's own asset on its chain, from a clean sender, unless told otherwise. */
function deposit(blockTimestamp: Date, over: Partial<{ blockchainId: string; assetId: string; amlFlagged: boolean }> = {}) {
  return { blockchainId: CHAIN_A, assetId: USDC_A, amlFlagged: false, blockTimestamp, ...over };
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
    expect(classify(checkout(over), deposit(blockTime))).toBe(expected);
  });

  test.each([
    ['another asset on the checkout chain, the same raw value', { assetId: DAI_A }, 'WRONG_ASSET'],
    ['the same token symbol on another chain', { blockchainId: CHAIN_B, assetId: USDC_B }, 'WRONG_CHAIN'],
    ['the right asset from a sanctioned sender', { amlFlagged: true }, 'AML_FLAGGED'],
    ['another asset from a sanctioned sender', { assetId: DAI_A, amlFlagged: true }, 'AML_FLAGGED'],
  ])('%s: never counted, whatever the checkout state', (_name, over, expected) => {
    for (const status of ['AWAITING_PAYMENT', 'DETECTED', 'UNDERPAID', 'EXPIRED', 'PAID', 'CANCELLED'] as CheckoutStatus[]) {
      expect([status, classify(checkout({ status }), deposit(NOW, over))]).toEqual([status, expected]);
    }
  });
});

describe("which checkouts hold one of a limited link's payments", () => {
  test.each([
    ['an open session nobody paid', 'AWAITING_PAYMENT', LATER, false],
    ['a payment seen at the head, not yet recorded', 'DETECTED', LATER, false],
    ['a recorded payment confirming, whatever the clock says', 'CONFIRMING', EARLIER, true],
    ['underpaid, open to a top-up', 'UNDERPAID', LATER, true],
    ['underpaid, expired within the sighting grace', 'UNDERPAID', new Date(NOW.getTime() - 60_000), true],
    ['underpaid, expired beyond the grace', 'UNDERPAID', new Date(NOW.getTime() - SIGHTING_GRACE_MS - 1), false],
    ['paid (consumed instead)', 'PAID', LATER, false],
    ['expired unpaid', 'EXPIRED', EARLIER, false],
  ] as [string, CheckoutStatus, Date, boolean][])('%s: %s', (_name, status, expiresAt, expected) => {
    expect(holdsPayment({ status, expiresAt }, NOW)).toBe(expected);
  });

  test('a recorded payment counts while consumed and held payments leave one free; unlimited links and holders always admit', () => {
    const unpaid = checkout();
    expect(paymentAdmitted({ paymentLimit: null, paymentsConsumed: 1_000 }, 1_000, unpaid, NOW)).toBe(true);
    expect(paymentAdmitted({ paymentLimit: 1, paymentsConsumed: 0 }, 0, unpaid, NOW)).toBe(true);
    expect(paymentAdmitted({ paymentLimit: 1, paymentsConsumed: 1 }, 0, unpaid, NOW)).toBe(false);
    expect(paymentAdmitted({ paymentLimit: 1, paymentsConsumed: 0 }, 1, unpaid, NOW)).toBe(false);
    expect(paymentAdmitted({ paymentLimit: 3, paymentsConsumed: 1 }, 1, unpaid, NOW)).toBe(true);
    // A top-up to an underpaid checkout already holds its payment.
    expect(paymentAdmitted({ paymentLimit: 1, paymentsConsumed: 0 }, 0, checkout({ status: 'UNDERPAID' }), NOW)).toBe(true);
  });
});

describe('why a deposit is not counted', () => {
  const usdcOnA = { symbol: 'USDC', chain: 'Dev chain A' };
  test.each([
    ['PAYMENT', { symbol: 'USDC', chain: 'Dev chain A' }, null],
    ['WRONG_ASSET', { symbol: 'DAI', chain: 'Dev chain A' }, 'DAI is not the asset asked for: the checkout takes USDC on Dev chain A only'],
    ['WRONG_CHAIN', { symbol: 'USDC', chain: 'Dev chain B' }, 'Sent on Dev chain B: the checkout takes USDC on Dev chain A only'],
    ['AML_FLAGGED', usdcOnA, 'The sender is on a sanctions list: the funds are held at the checkout address for AML review'],
    ['OVER_LIMIT', usdcOnA, 'The payment link had already taken all its payments'],
    ['LATE', usdcOnA, 'Mined after the checkout expired'],
    ['REPEAT', usdcOnA, 'Arrived after the checkout was paid'],
  ] as const)('%s', (kind, paid, expected) => {
    expect(whyNotCounted(kind, paid, usdcOnA)).toBe(expected);
  });

  test('a LATE deposit to a cancelled checkout mined before its expiry is late for the cancellation, not for the expiry', () => {
    const cancelled = checkout({ status: 'CANCELLED' });
    expect(whyNotCounted('LATE', usdcOnA, usdcOnA, lateCause(cancelled, EARLIER))).toBe('The checkout was cancelled before this payment was recorded');
    expect(whyNotCounted('LATE', usdcOnA, usdcOnA, lateCause(cancelled, new Date(LATER.getTime() + 1_000)))).toBe('Mined after the checkout expired');
    expect(lateCause(checkout({ status: 'UNDERPAID', expiresAt: EARLIER }), NOW)).toBe('EXPIRED');
  });
});
