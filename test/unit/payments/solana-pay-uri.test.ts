import { isAddress } from '@solana/kit';
import { newSolanaPayReference, solanaPayUri } from '../../../src/modules/checkout/solana-pay-uri';

const RECIPIENT = 'mvines9iiHiQTysrwkJjGf2gb9Ex9jXJX8ns3qwf2kN';
const USDC_MINT = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const REFERENCE = '82ZJ7nbGpixjeDCmEhUcmwXYfvurzAgGdtSMuHnUgyny';

describe('solanaPayUri (https://docs.solanapay.com/spec)', () => {
  test("the spec's own examples", () => {
    // "URL describing a transfer request for 1 SOL."
    expect(solanaPayUri({ recipient: RECIPIENT, amount: '1', label: 'Michael', message: 'Thanks for all the fish', memo: 'OrderId12345' })).toBe(
      'solana:mvines9iiHiQTysrwkJjGf2gb9Ex9jXJX8ns3qwf2kN?amount=1&label=Michael&message=Thanks%20for%20all%20the%20fish&memo=OrderId12345',
    );
    // "URL describing a transfer request for 0.01 USDC."
    expect(solanaPayUri({ recipient: RECIPIENT, amount: '0.01', splToken: USDC_MINT })).toBe(
      'solana:mvines9iiHiQTysrwkJjGf2gb9Ex9jXJX8ns3qwf2kN?amount=0.01&spl-token=EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
    );
  });

  test('a checkout request: amount, mint, reference, label and message in that order, percent-encoded (a space is %20, never +)', () => {
    expect(solanaPayUri({ recipient: RECIPIENT, amount: '7.25', splToken: USDC_MINT, reference: [REFERENCE], label: 'Café & Co', message: 'Order #12: 1 kg?' })).toBe(
      `solana:${RECIPIENT}?amount=7.25&spl-token=${USDC_MINT}&reference=${REFERENCE}&label=Caf%C3%A9%20%26%20Co&message=Order%20%2312%3A%201%20kg%3F`,
    );
    // SOL: no spl-token; several references repeat the parameter; empty label and message are left out.
    expect(solanaPayUri({ recipient: RECIPIENT, amount: '0.000000001', reference: [REFERENCE, USDC_MINT], label: '', message: null })).toBe(
      `solana:${RECIPIENT}?amount=0.000000001&reference=${REFERENCE}&reference=${USDC_MINT}`,
    );
  });

  test('refuses what a wallet would refuse', () => {
    expect(() => solanaPayUri({ recipient: '0x8ba1f109551bD432803012645Ac136ddd64DBA72', amount: '1' })).toThrow(/recipient/);
    expect(() => solanaPayUri({ recipient: RECIPIENT, amount: '1', splToken: 'not-a-mint' })).toThrow(/spl-token/);
    expect(() => solanaPayUri({ recipient: RECIPIENT, amount: '1', reference: ['0OIl'] })).toThrow(/reference/);
    for (const amount of ['1e-6', '-1', '.5', '1.', '01', '1,5', '']) expect(() => solanaPayUri({ recipient: RECIPIENT, amount })).toThrow(/amount/);
  });

  test('a fresh reference is a base58 32-byte key, never the same twice', () => {
    const refs = Array.from({ length: 200 }, newSolanaPayReference);
    expect(refs.every((r) => isAddress(r))).toBe(true);
    expect(new Set(refs).size).toBe(200);
  });
});
