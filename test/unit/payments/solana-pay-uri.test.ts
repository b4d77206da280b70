import { isAddress } from '@solana/kit';
import { newSolanaPayReference, solanaPayUri } from '../../../src/modules/checkout/solana-pay-uri';
import { qrSvg } from '../../../src/modules/checkout';
import { paymentUri } from '../../../src/modules/checkout/checkout-desk';
import { QR_TEXT_MAX_LENGTH } from '../../../src/modules/checkout/checkout-qr';

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

  test("fits a QR code: a link's longest name and description are shortened (the label first), what the payment needs never", async () => {
    const request = { recipient: RECIPIENT, amount: '123456.123456', splToken: USDC_MINT, reference: [REFERENCE] };
    const needs = `solana:${RECIPIENT}?amount=123456.123456&spl-token=${USDC_MINT}&reference=${REFERENCE}`;
    // A name of 200 characters and a description of 2000 (the longest a link takes).
    const uri = solanaPayUri({ ...request, label: 'N'.repeat(200), message: 'Delivery notes: '.repeat(125) });
    expect(uri.length).toBeLessThanOrEqual(QR_TEXT_MAX_LENGTH);
    expect(uri.startsWith(`${needs}&label=${'N'.repeat(200)}&message=Delivery%20notes%3A%20`)).toBe(true);
    expect(uri.endsWith('%E2%80%A6')).toBe(true);
    await expect(qrSvg(uri)).resolves.toContain('<svg');
    // Percent-encoded text takes up to 9 characters a letter: the label is cut at a letter, and no room is left for the message.
    const wide = solanaPayUri({ ...request, label: '\u6771'.repeat(200), message: 'Thanks' });
    expect(wide.length).toBeLessThanOrEqual(QR_TEXT_MAX_LENGTH);
    expect(wide.startsWith(needs)).toBe(true);
    expect(wide.slice(needs.length)).toMatch(/^&label=(%E6%9D%B1)+%E2%80%A6$/);
    // A memo is part of the transfer: kept whole, and the label and message make room for it.
    const memo = 'M'.repeat(150);
    const withMemo = solanaPayUri({ ...request, label: 'L'.repeat(200), message: 'x', memo });
    expect(withMemo.length).toBeLessThanOrEqual(QR_TEXT_MAX_LENGTH);
    expect(withMemo.startsWith(needs)).toBe(true);
    expect(withMemo.slice(needs.length)).toMatch(new RegExp(`^&label=L+%E2%80%A6&memo=${memo}$`));
    // A lone surrogate (which percent-encoding refuses) is shown as U+FFFD.
    expect(solanaPayUri({ ...request, label: 'a\uD800b' })).toBe(`${needs}&label=a%EF%BF%BDb`);
  });

  test('an EIP-681 request, however long its parts, fits a QR code', async () => {
    const asset = { isNative: false, address: `0x${'f'.repeat(40)}`, blockchain: { chainId: 2 ** 53 - 1 } } as Parameters<typeof paymentUri>[0];
    const uri = paymentUri(asset, `0x${'e'.repeat(40)}`, 2n ** 256n - 1n);
    expect(uri.length).toBeLessThanOrEqual(QR_TEXT_MAX_LENGTH);
    await expect(qrSvg(uri)).resolves.toContain('<svg');
  });

  test('a text too long for a QR code is a clear refusal, not a server error', async () => {
    await expect(qrSvg('x'.repeat(QR_TEXT_MAX_LENGTH + 1))).rejects.toMatchObject({ code: 'PAYMENT_FAILED', message: expect.stringContaining('too long for a QR code') });
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
