import { eventTypesCover, unknownEventTypes, UPPER_CASE_EVENT_TYPES, EVENT_NAMES } from '../../../src/platform/events/catalogue';

test.each([
  [['*'], 'payment_link_transfer.updated', true],
  [['master.*'], 'master.incoming_transfer', true],
  [['master.*'], 'master_settlement_rule.executed', false],
  [['payment_link.*'], 'payment_link_transfer.created', false],
  [['payment_link_transfer.*'], 'payment_link_transfer.created', true],
  [['address.created'], 'address.updated', false],
  [['DEPOSITE_INCOMING_DETECTED'], 'master.incoming_transfer', true],
  [['TRANFER_FAILED'], 'address.transfer_failed', true],
  [['TRANFER_FAILED'], 'address.transfer_executed', false],
])('%j covers %s: %s', (types, event, expected) => {
  expect(eventTypesCover(types, event)).toBe(expected);
});

test('every upper-case identifier maps only to real event names', () => {
  for (const covered of Object.values(UPPER_CASE_EVENT_TYPES)) for (const name of covered) expect(EVENT_NAMES).toContain(name);
});

test('unknown values are named; near-misses of the spec spelling are unknown', () => {
  expect(unknownEventTypes(['master.*', 'TRANSFER_FAILED', 'DEPOSIT_INCOMING_DETECTED', 'master.'])).toEqual(['TRANSFER_FAILED', 'DEPOSIT_INCOMING_DETECTED', 'master.']);
});
