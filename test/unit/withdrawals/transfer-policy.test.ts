import { checkTransferPolicy } from '../../../src/modules/withdrawals/transfer-policy';
import { formatScaled } from '../../../src/platform/decimal';

const usdc = { id: 'usdc', decimals: 6, symbol: 'USDC' };
const dai = { id: 'dai', decimals: 18, symbol: 'DAI' };
const alice = '0x1111111111111111111111111111111111111111';
const bob = '0x2222222222222222222222222222222222222222';
const open = { requireApprovalForTransfers: false, maxTransferAmount: '', allowedRecipients: [] as string[] };

describe('configurations.security applied to transfer lines', () => {
  test('an empty policy allows any recipient and amount', () => {
    expect(() => checkTransferPolicy(open, [{ asset: usdc, recipient: bob, rawAmount: 10n ** 30n }])).not.toThrow();
  });

  test('maxTransferAmount caps the total of each asset in its own units, inclusive', () => {
    const policy = { ...open, maxTransferAmount: '10.5' };
    expect(() => checkTransferPolicy(policy, [{ asset: usdc, recipient: bob, rawAmount: 10_500_000n }])).not.toThrow();
    expect(() => checkTransferPolicy(policy, [{ asset: usdc, recipient: bob, rawAmount: 10_500_001n }])).toThrow(expect.objectContaining({ code: 'FORBIDDEN', details: { fields: [{ field: 'assets.0.amount', error: 'INVALID_FIELD' }] } }));
    // Decimals beyond the asset's own are dropped, never rounded up into a larger cap.
    expect(() => checkTransferPolicy({ ...open, maxTransferAmount: '1.0000009' }, [{ asset: usdc, recipient: bob, rawAmount: 1_000_001n }])).toThrow(expect.objectContaining({ code: 'FORBIDDEN' }));
  });

  test('lines of one asset count together: splitting an amount does not get past the cap', () => {
    const policy = { ...open, maxTransferAmount: '10' };
    const line = (asset: typeof usdc, rawAmount: bigint) => ({ asset, recipient: bob, rawAmount });
    expect(() => checkTransferPolicy(policy, [line(usdc, 6_000_000n), line(usdc, 4_000_000n)])).not.toThrow();
    expect(() => checkTransferPolicy(policy, [line(usdc, 6_000_000n), line(usdc, 4_000_001n)])).toThrow(
      expect.objectContaining({ code: 'FORBIDDEN', details: { fields: [{ field: 'assets.1.amount', error: 'INVALID_FIELD' }] } }),
    );
    // Each asset has its own total, in its own units.
    expect(() => checkTransferPolicy(policy, [line(usdc, 10_000_000n), line(dai, 10n * 10n ** 18n)])).not.toThrow();
  });

  test('allowedRecipients names the only recipients, whatever their letter case', () => {
    const policy = { ...open, allowedRecipients: [alice] };
    expect(() => checkTransferPolicy(policy, [{ asset: usdc, recipient: alice.toUpperCase().replace('0X', '0x'), rawAmount: 1n }])).not.toThrow();
    expect(() => checkTransferPolicy(policy, [{ asset: usdc, recipient: alice, rawAmount: 1n }, { asset: usdc, recipient: bob, rawAmount: 1n }])).toThrow(
      expect.objectContaining({ code: 'FORBIDDEN', details: { fields: [{ field: 'assets.1.recipient', error: 'INVALID_FIELD' }] } }),
    );
  });
});

describe('amounts at the edge', () => {
  test('are plain decimals in whole units', () => {
    expect(formatScaled(1_500_000n, 6)).toBe('1.5');
    expect(formatScaled(0n, 18)).toBe('0');
    expect(formatScaled(10n ** 18n, 18)).toBe('1');
    expect(formatScaled(1n, 18)).toBe('0.000000000000000001');
  });
});
