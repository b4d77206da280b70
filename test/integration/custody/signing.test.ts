import { readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { ethers } from 'ethers';
import { anotherAdmin, TestOrg } from '../../support/keel';
import { useTestKeel } from '../../support/use-test-keel';
import { eventually, WebhookReceiver } from '../../support/webhook-receiver';
import { shippedSanctionsDirectory } from '../../../src/modules/aml/sanctions-files';
import { rpc } from '../../../src/platform/chain/json-rpc';
import { mine, setAutomine } from '../../support/chain-controls';
import { OwnChainKeel, startKeelOnOwnChain } from '../../support/own-chain';
import { settlementInterface } from '../../../src/modules/settlement/settlement-contract';
import { devChainAccount } from '../../../src/platform/chain/dev-accounts';

const SANCTIONED = readFileSync(path.join(shippedSanctionsDirectory(), 'sanctioned_addresses_ETH.txt'), 'utf8').split('\n')[0].trim();
const erc20 = new ethers.Interface(['function transfer(address,uint256)', 'function approve(address,uint256)', 'function balanceOf(address) view returns (uint256)']);
const recipient = () => ethers.Wallet.createRandom().address;

const mail = {
  domain: { name: 'Ether Mail', version: '1', chainId: 31337, verifyingContract: '0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC' },
  types: {
    EIP712Domain: [
      { name: 'name', type: 'string' },
      { name: 'version', type: 'string' },
      { name: 'chainId', type: 'uint256' },
      { name: 'verifyingContract', type: 'address' },
    ],
    Mail: [
      { name: 'from', type: 'string' },
      { name: 'contents', type: 'string' },
    ],
  },
  primaryType: 'Mail',
  message: { from: 'Cow', contents: 'Hello, Bob!' },
};

function permit(owner: string, spender: string) {
  return {
    domain: { name: 'USD Coin', version: '2', chainId: 31337, verifyingContract: '0x1111111111111111111111111111111111111111' },
    types: {
      Permit: [
        { name: 'owner', type: 'address' },
        { name: 'spender', type: 'address' },
        { name: 'value', type: 'uint256' },
        { name: 'nonce', type: 'uint256' },
        { name: 'deadline', type: 'uint256' },
      ],
    },
    primaryType: 'Permit',
    message: { owner, spender, value: ethers.MaxUint256.toString(), nonce: '0', deadline: '99999999999' },
  };
}

function transferWithAuthorization(token: string, chainId: number, from: string, to: string, value: bigint) {
  return {
    domain: { name: 'USD Coin', version: '2', chainId, verifyingContract: token },
    types: {
      TransferWithAuthorization: [
        { name: 'from', type: 'address' },
        { name: 'to', type: 'address' },
        { name: 'value', type: 'uint256' },
        { name: 'validAfter', type: 'uint256' },
        { name: 'validBefore', type: 'uint256' },
        { name: 'nonce', type: 'bytes32' },
      ],
    },
    primaryType: 'TransferWithAuthorization',
    message: { from, to, value: value.toString(), validAfter: '0', validBefore: '99999999999', nonce: ethers.hexlify(ethers.randomBytes(32)) },
  };
}

/** EIP-712 fields written as "type name". */
const typedFields = (...fields: string[]) => fields.map((f) => ({ type: f.split(' ')[0], name: f.split(' ')[1] }));

/** ERC-2771: the forwarder at the domain's verifyingContract calls `to` with `value` and `data` as `from`. */
function forwardRequest(chainId: number, from: string, to: string, data: string, value = 0n) {
  return {
    domain: { name: 'MinimalForwarder', version: '0.0.1', chainId, verifyingContract: '0x6666666666666666666666666666666666666666' },
    types: { ForwardRequest: typedFields('address from', 'address to', 'uint256 value', 'uint256 gas', 'uint256 nonce', 'bytes data') },
    primaryType: 'ForwardRequest',
    message: { from, to, value: value.toString(), gas: '100000', nonce: '0', data },
  };
}

/** A native meta-transaction: the contract at the domain's verifyingContract runs `functionSignature` as `from`. */
function metaTransaction(contract: string, chainId: number, from: string, functionSignature: string) {
  return {
    domain: { name: 'USD Coin (PoS)', version: '1', verifyingContract: contract, salt: ethers.zeroPadValue(ethers.toBeHex(chainId), 32) },
    types: { MetaTransaction: typedFields('uint256 nonce', 'address from', 'bytes functionSignature') },
    primaryType: 'MetaTransaction',
    message: { nonce: '0', from, functionSignature },
  };
}

/** A Safe transaction the signer approves as one of the Safe's owners: the Safe makes the call. */
function safeTx(chainId: number, to: string, data: string) {
  return {
    domain: { chainId, verifyingContract: '0x5afe5afe5afe5afe5afe5afe5afe5afe5afe5afe' },
    types: { SafeTx: typedFields('address to', 'uint256 value', 'bytes data', 'uint8 operation', 'uint256 safeTxGas', 'uint256 baseGas', 'uint256 gasPrice', 'address gasToken', 'address refundReceiver', 'uint256 nonce') },
    primaryType: 'SafeTx',
    message: { to, value: '0', data, operation: 0, safeTxGas: '0', baseGas: '0', gasPrice: '0', gasToken: ethers.ZeroAddress, refundReceiver: ethers.ZeroAddress, nonce: '0' },
  };
}

const withoutDomainType = ({ EIP712Domain: _d, ...types }: Record<string, { name: string; type: string }[]>) => types;

describe('signing with master wallets and deposit addresses', () => {
  const { t, orgs } = useTestKeel({ RATE_LIMIT_SCALE: 100, CHAIN_POLL_INTERVAL_MS: 100, TRANSFER_POLL_INTERVAL_MS: 100, WEBHOOKS_ALLOW_PRIVATE_URLS: true, OUTBOX_POLL_INTERVAL_MS: 20 }, { orgs: 2 });
  const receiver = new WebhookReceiver();
  let org: TestOrg;
  let other: TestOrg;
  let chainId: string;
  let assets: Record<string, { id: string; address: string }>;

  beforeAll(async () => {
    [org, other] = orgs;
    const url = await receiver.start();
    expect((await org.core.post('/v1/webhooks', { url, name: 'signing', eventTypes: ['SIGNED_SUCCESS', 'SIGNED_FAILED'] })).status).toBe(201);
    chainId = (await org.core.get('/v1/blockchains')).body.data[0].id;
    const list = (await org.core.get(`/v1/assets?blockchainId=${chainId}&limit=100`)).body.data;
    assets = Object.fromEntries(list.map((a: { symbol: string }) => [a.symbol, a]));
  });
  afterAll(() => receiver.stop());

  async function wallet(configurations?: object) {
    const res = await org.core.post('/v1/master-wallets', { blockchainId: chainId, name: 'Signer', configurations });
    expect(res.status).toBe(201);
    return res.body.data as { id: string; walletAddress: string };
  }

  async function fund(address: string, amount: string, asset?: string) {
    const res = await org.core.post('/v1/dev/faucet', { blockchainId: chainId, address, amount, asset });
    expect(res.status).toBe(200);
    await eventually(async () => (await t.keel.platform.db('chain_transfers').where({ txHash: res.body.data.txHash, direction: 'incoming' }).first()) !== undefined, 30_000);
  }

  /** The webhook deliveries about one signing request (each event once). */
  const delivered = (signatureId: string) => receiver.requests.map((r) => JSON.parse(r.body)).filter((e) => e.data.signatureId === signatureId);
  const deliveredOnce = (signatureId: string, type: string) => eventually(() => delivered(signatureId).length === 1 && delivered(signatureId)[0].type === type && delivered(signatureId)[0], 10_000);

  test('a message signed by the master wallet and by a deposit address verifies with ethers, each announced to the webhook with its identifier', async () => {
    const w = await wallet();
    const res = await org.core.post(`/v1/master-wallets/${w.id}/sign/message`, { message: 'I own this wallet' });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ kind: 'MESSAGE', status: 'SIGNED', signer: w.walletAddress, addressId: null });
    expect(ethers.verifyMessage('I own this wallet', res.body.data.signature)).toBe(w.walletAddress);
    const event = await deliveredOnce(res.body.data.id, 'master.signed_success');
    expect(event.data).toMatchObject({ signer: w.walletAddress, signature: res.body.data.signature, request: { message: 'I own this wallet', encoding: 'UTF8' }, masterWalletId: w.id });

    const address = (await org.core.post(`/v1/master-wallets/${w.id}/addresses`, {})).body.data;
    const hex = await org.core.post(`/v1/addresses/${address.id}/sign/message`, { message: '0xdeadbeef', encoding: 'HEX' });
    expect(hex.status).toBe(201);
    expect(ethers.verifyMessage(ethers.getBytes('0xdeadbeef'), hex.body.data.signature)).toBe(address.address);
    expect((await deliveredOnce(hex.body.data.id, 'address.signed_success')).data).toMatchObject({ addressId: address.id, signer: address.address });
    // Nothing secret is echoed or stored: the response and the record carry the signature, never a key.
    const stored = await t.keel.platform.db('signing_requests').where({ id: hex.body.data.id }).first();
    expect(JSON.stringify({ stored, body: hex.body })).not.toMatch(/privateKey|mnemonic|sealed/i);
  });

  test("an event's signature is shown to admin keys only: live events and the delivery log show a read key null", async () => {
    const readKey = (await org.core.post('/v1/api-keys', { name: 'watcher', scopes: ['read'] })).body.data.secret;
    const listen = (apiKey: string) => {
      const seen: { data: { signatureId?: string; signature?: string | null } }[] = [];
      const client = createClient({ url: `${t.coreUrl.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, connectionParams: { apiKey, orgId: org.orgId }, retryAttempts: 0, lazyCloseTimeout: 0 });
      client.subscribe({ query: 'subscription { events(types: ["SIGNED_SUCCESS"]) { type data } }' }, { next: (m) => void seen.push((m.data as { events: (typeof seen)[0] }).events), error: () => undefined, complete: () => undefined });
      return { seen, client };
    };
    const [admin, reader] = [listen(org.adminKey), listen(readKey)];
    try {
      await new Promise((r) => setTimeout(r, 500)); // both subscribed
      const w = await wallet();
      const res = await org.core.post(`/v1/master-wallets/${w.id}/sign/message`, { message: 'shown to admins' });
      const of = (l: typeof admin) => l.seen.find((e) => e.data.signatureId === res.body.data.id);
      await eventually(() => of(admin) !== undefined && of(reader) !== undefined, 10_000);
      expect(of(admin)!.data.signature).toBe(res.body.data.signature);
      expect(of(reader)!.data.signature).toBeNull();

      await deliveredOnce(res.body.data.id, 'master.signed_success');
      const auditor = org.core.with({ apiKey: readKey, orgId: org.orgId });
      const logged = (client: typeof auditor) => client.get('/v1/webhook-events?limit=100').then((r) => r.body.data.find((d: { payload: { data: { signatureId?: string } } }) => d.payload.data.signatureId === res.body.data.id));
      expect((await logged(org.core)).payload.data.signature).toBe(res.body.data.signature);
      expect((await logged(auditor)).payload.data.signature).toBeNull();
    } finally {
      await Promise.all([admin.client.dispose(), reader.client.dispose()]);
    }
  });

  test('typed data (EIP-712) signed by a deposit address verifies with ethers.verifyTypedData', async () => {
    const w = await wallet();
    const address = (await org.core.post(`/v1/master-wallets/${w.id}/addresses`, {})).body.data;
    const res = await org.core.post(`/v1/addresses/${address.id}/sign/typed-data`, { typedData: mail });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ kind: 'TYPED_DATA', status: 'SIGNED', risks: [] });
    expect(ethers.verifyTypedData(mail.domain, withoutDomainType(mail.types), mail.message, res.body.data.signature)).toBe(address.address);
    await deliveredOnce(res.body.data.id, 'address.signed_success');
  });

  test('a transaction signed without broadcast recovers to the wallet, is listed for audit, and nothing is sent', async () => {
    const w = await wallet();
    const to = recipient();
    const res = await org.core.post(`/v1/master-wallets/${w.id}/sign/transaction`, { blockchainId: chainId, to, value: '1000', nonce: 7, gasLimit: '21000', maxFeePerGas: '2000000000', maxPriorityFeePerGas: '1000000000' });
    expect(res.status).toBe(201);
    const tx = ethers.Transaction.from(res.body.data.signature);
    expect(tx.from).toBe(w.walletAddress);
    expect([tx.to, tx.value, tx.nonce, tx.gasLimit]).toEqual([to, 1000n, 7, 21000n]);
    expect(res.body.data.txHash).toBe(tx.hash);
    await deliveredOnce(res.body.data.id, 'master.signed_success');

    const listed = await org.core.get(`/v1/master-wallets/${w.id}/signatures`);
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((s: { id: string }) => s.id)).toEqual([res.body.data.id]);
    const one = await org.core.get(`/v1/signatures/${res.body.data.id}`);
    expect(one.body.data).toMatchObject({ id: res.body.data.id, kind: 'TRANSACTION', signature: res.body.data.signature, transferId: null });
    // A read key sees the request and its outcome, not the signed bytes it could broadcast.
    const readKey = (await org.core.post('/v1/api-keys', { name: 'auditor', scopes: ['read'] })).body.data.secret;
    const auditor = org.core.with({ apiKey: readKey, orgId: org.orgId });
    expect((await auditor.get(`/v1/signatures/${res.body.data.id}`)).body.data).toMatchObject({ id: res.body.data.id, status: 'SIGNED', txHash: tx.hash, signature: null });
    expect((await auditor.get(`/v1/master-wallets/${w.id}/signatures`)).body.data[0].signature).toBeNull();
    expect(await t.keel.services.networks.get(chainId)!.provider.getTransaction(tx.hash!)).toBeNull();
  });

  test("a signed transaction's fee is bounded: a max fee far above the chain's or a tip above the max fee is 422 naming the field, and the most it may pay counts toward maxTransferAmount", async () => {
    const treasury = recipient();
    const w = await wallet({ security: { allowedRecipients: [treasury], maxTransferAmount: '0.001' } });
    const sign = (fields: object) => org.core.post(`/v1/master-wallets/${w.id}/sign/transaction`, { blockchainId: chainId, to: treasury, value: '0', gasLimit: '21000', ...fields });
    // The whole balance as a tip to whoever mines it: a plain payment of nothing to an allowed recipient.
    const drainingTip = (ethers.parseEther('1000') / 21000n).toString();
    const drain = await sign({ maxFeePerGas: drainingTip, maxPriorityFeePerGas: drainingTip });
    expect(drain.status).toBe(422);
    expect(drain.body.error.details.fields[0].field).toBe('maxFeePerGas');
    const tipAboveFee = await sign({ maxFeePerGas: '1000000000', maxPriorityFeePerGas: '1000000001' });
    expect(tipAboveFee.status).toBe(422);
    expect(tipAboveFee.body.error.details.fields[0].field).toBe('maxPriorityFeePerGas');

    // 0.00099 ETH is within the cap alone, not with 21000 gas at 2 gwei (0.000042 ETH) on top.
    const fees = { maxFeePerGas: '2000000000', maxPriorityFeePerGas: '1000000000' };
    const overCap = await sign({ value: ethers.parseEther('0.00099').toString(), ...fees });
    expect(overCap.status).toBe(403);
    expect(overCap.body.error).toMatchObject({ code: 'FORBIDDEN', details: { fields: [{ field: 'maxFeePerGas' }] } });
    const withinCap = await sign({ value: ethers.parseEther('0.0009').toString(), ...fees });
    expect(withinCap.status).toBe(201);
    expect(ethers.Transaction.from(withinCap.body.data.signature)).toMatchObject({ to: treasury, maxFeePerGas: 2_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n });
  });

  test('a Permit is refused (403 SPENDING_APPROVAL_REFUSED, signed_failed), still refused with the flag under a policy that forbids it, and signed with the flag once the policy allows it', async () => {
    const w = await wallet();
    const spender = recipient();
    const typedData = permit(w.walletAddress, spender);
    const refused = await org.core.post(`/v1/master-wallets/${w.id}/sign/typed-data`, { typedData });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: 'SPENDING_APPROVAL_REFUSED', details: { reason: 'RISK_NOT_ACKNOWLEDGED', risk: 'SPENDING_APPROVAL', findings: ['PERMIT'] } });
    const [record] = (await org.core.get(`/v1/master-wallets/${w.id}/signatures?status=REFUSED`)).body.data;
    expect(record).toMatchObject({ status: 'REFUSED', errorCode: 'SPENDING_APPROVAL_REFUSED', signature: null, risks: ['PERMIT'] });
    expect((await deliveredOnce(record.id, 'master.signed_failed')).data).toMatchObject({ signer: w.walletAddress, errorCode: 'SPENDING_APPROVAL_REFUSED', signature: null });

    const flagged = await org.core.post(`/v1/master-wallets/${w.id}/sign/typed-data`, { typedData, acknowledgeRisk: 'SPENDING_APPROVAL' });
    expect(flagged.status).toBe(403);
    expect(flagged.body.error.details.reason).toBe('POLICY_FORBIDS_SPENDING_APPROVALS');

    expect((await org.core.patch(`/v1/master-wallets/${w.id}`, { configurations: { security: { allowSpendingApprovals: true } } })).status).toBe(200);
    // The policy alone is not enough: the request must still name the risk.
    expect((await org.core.post(`/v1/master-wallets/${w.id}/sign/typed-data`, { typedData })).status).toBe(403);
    const signed = await org.core.post(`/v1/master-wallets/${w.id}/sign/typed-data`, { typedData, acknowledgeRisk: 'SPENDING_APPROVAL' });
    expect(signed.status).toBe(201);
    expect(signed.body.data).toMatchObject({ status: 'SIGNED', risks: ['PERMIT'], acknowledgedRisk: 'SPENDING_APPROVAL' });
    expect(ethers.verifyTypedData(typedData.domain, typedData.types, typedData.message, signed.body.data.signature)).toBe(w.walletAddress);
  });

  test('a message of exactly 32 bytes may be a digest (a Safe transaction\'s hash, which a Safe takes as its owner\'s approval): signed only with the risk named and allowed, as a call Keel cannot read is', async () => {
    const w = await wallet();
    const safe = safeTx(31337, recipient(), '0x');
    const safeTxHash = ethers.TypedDataEncoder.hash(safe.domain, safe.types, safe.message);
    const sign = (body: object) => org.core.post(`/v1/master-wallets/${w.id}/sign/message`, body);
    const unnamed = await sign({ message: safeTxHash, encoding: 'HEX' });
    expect(unnamed.status).toBe(403);
    expect(unnamed.body.error).toMatchObject({ code: 'SPENDING_APPROVAL_REFUSED', details: { reason: 'RISK_NOT_ACKNOWLEDGED', findings: ['DIGEST_SIGNATURE'] } });
    // The verifier sees only the 32 bytes: a text that long in UTF-8 is the same signature.
    expect((await sign({ message: 'x'.repeat(32) })).body.error).toMatchObject({ code: 'SPENDING_APPROVAL_REFUSED', details: { findings: ['DIGEST_SIGNATURE'] } });
    expect((await sign({ message: safeTxHash, encoding: 'HEX', acknowledgeRisk: 'SPENDING_APPROVAL' })).body.error.details.reason).toBe('POLICY_FORBIDS_SPENDING_APPROVALS');
    const refused = (await org.core.get(`/v1/master-wallets/${w.id}/signatures?status=REFUSED`)).body.data;
    expect(refused).toHaveLength(3);
    expect(refused[2]).toMatchObject({ kind: 'MESSAGE', errorCode: 'SPENDING_APPROVAL_REFUSED', risks: ['DIGEST_SIGNATURE'] });
    // Any other length is an ordinary message.
    expect((await sign({ message: ethers.hexlify(ethers.randomBytes(31)), encoding: 'HEX' })).body.data).toMatchObject({ status: 'SIGNED', risks: [] });

    expect((await org.core.patch(`/v1/master-wallets/${w.id}`, { configurations: { security: { allowSpendingApprovals: true } } })).status).toBe(200);
    expect((await sign({ message: safeTxHash, encoding: 'HEX' })).status).toBe(403);
    const named = await sign({ message: safeTxHash, encoding: 'HEX', acknowledgeRisk: 'SPENDING_APPROVAL' });
    expect(named.status).toBe(201);
    expect(named.body.data).toMatchObject({ status: 'SIGNED', risks: ['DIGEST_SIGNATURE'], acknowledgedRisk: 'SPENDING_APPROVAL', request: { message: safeTxHash, encoding: 'HEX', acknowledgeRisk: 'SPENDING_APPROVAL' } });
    expect(ethers.verifyMessage(ethers.getBytes(safeTxHash), named.body.data.signature)).toBe(w.walletAddress);
  });

  test('an unlimited ERC-20 approve in a transaction is refused without the flag; a transfer is held to allowedRecipients and maxTransferAmount as decoded', async () => {
    const spender = recipient();
    const allowed = recipient();
    const approve = erc20.encodeFunctionData('approve', [spender, ethers.MaxUint256]);
    const open = await wallet();
    const unlimited = await org.core.post(`/v1/master-wallets/${open.id}/sign/transaction`, { blockchainId: chainId, to: assets.USDC.address, data: approve, gasLimit: '60000' });
    expect(unlimited.status).toBe(403);
    expect(unlimited.body.error).toMatchObject({ code: 'SPENDING_APPROVAL_REFUSED', details: { reason: 'RISK_NOT_ACKNOWLEDGED', findings: ['UNLIMITED_APPROVE'] } });

    const w = await wallet({ security: { allowedRecipients: [spender, allowed], maxTransferAmount: '100' } });
    const refused = await org.core.post(`/v1/master-wallets/${w.id}/sign/transaction`, { blockchainId: chainId, to: assets.USDC.address, data: approve, gasLimit: '60000' });
    expect(refused.status).toBe(403);
    // maxTransferAmount reads the approve's amount first.
    expect(refused.body.error).toMatchObject({ code: 'FORBIDDEN', details: { fields: [{ field: 'amount' }] } });
    const small = await org.core.post(`/v1/master-wallets/${w.id}/sign/transaction`, { blockchainId: chainId, to: assets.USDC.address, data: erc20.encodeFunctionData('approve', [spender, 5_000_000n]), gasLimit: '60000' });
    // Nothing held yet: 5 USDC is more than the wallet holds, a standing grant over future deposits.
    expect(small.body.error).toMatchObject({ code: 'SPENDING_APPROVAL_REFUSED', details: { findings: ['APPROVE_ABOVE_HOLDINGS'] } });

    const stranger = await org.core.post(`/v1/master-wallets/${w.id}/sign/transaction`, { blockchainId: chainId, to: assets.USDC.address, data: erc20.encodeFunctionData('transfer', [recipient(), 1n]), gasLimit: '60000' });
    expect(stranger.status).toBe(403);
    expect(stranger.body.error.details.fields).toEqual([{ field: 'recipient', error: 'INVALID_FIELD' }]);
    const tooMuch = await org.core.post(`/v1/master-wallets/${w.id}/sign/transaction`, { blockchainId: chainId, to: assets.USDC.address, data: erc20.encodeFunctionData('transfer', [allowed, 100_000_001n]), gasLimit: '60000' });
    expect(tooMuch.body.error).toMatchObject({ code: 'FORBIDDEN', details: { fields: [{ field: 'amount' }] } });
    const fine = await org.core.post(`/v1/master-wallets/${w.id}/sign/transaction`, { blockchainId: chainId, to: assets.USDC.address, data: erc20.encodeFunctionData('transfer', [allowed, 100_000_000n]), gasLimit: '60000' });
    expect(fine.status).toBe(201);
    expect(ethers.Transaction.from(fine.body.data.signature).from).toBe(w.walletAddress);
  });

  test("a call is held to allowedRecipients by its `to` whatever its calldata reads as: a token's transfer() or approve() sent to an address that is no token Keel knows is a call of that address, its value paid to it", async () => {
    const allowed = recipient();
    const stranger = recipient();
    const w = await wallet({ security: { allowedRecipients: [allowed] } });
    await fund(w.walletAddress, '1');
    for (const data of [erc20.encodeFunctionData('transfer', [allowed, 0n]), erc20.encodeFunctionData('approve', [allowed, 0n])]) {
      for (const sending of [{ gasLimit: '60000' }, { broadcast: true }]) {
        const res = await org.core.post(`/v1/master-wallets/${w.id}/sign/transaction`, { blockchainId: chainId, to: stranger, value: ethers.parseEther('0.5').toString(), data, ...sending });
        expect(res.status).toBe(403);
        expect(res.body.error).toMatchObject({ code: 'FORBIDDEN', details: { fields: [{ field: 'to', error: 'INVALID_FIELD' }] } });
      }
    }
    // The token Keel knows is still the contract of its transfer: the decoded recipient is the one held to the list.
    const tokenTransfer = await org.core.post(`/v1/master-wallets/${w.id}/sign/transaction`, { blockchainId: chainId, to: assets.USDC.address, data: erc20.encodeFunctionData('transfer', [allowed, 1n]), gasLimit: '60000' });
    expect(tokenTransfer.status).toBe(201);
  });

  test("the recipient a transferFrom or an NFT's transfer names is held to allowedRecipients and screened; what a transferFrom moves of a token Keel knows counts toward maxTransferAmount, and an NFT cannot be capped", async () => {
    const allowed = recipient();
    const stranger = recipient();
    const transfers = new ethers.Interface([
      'function transferFrom(address,address,uint256)',
      'function safeTransferFrom(address,address,uint256)',
      'function safeTransferFrom(address,address,uint256,uint256,bytes)',
      'function safeBatchTransferFrom(address,address,uint256[],uint256[],bytes)',
    ]);
    const sign = (w: { id: string }, to: string, data: string) => org.core.post(`/v1/master-wallets/${w.id}/sign/transaction`, { blockchainId: chainId, to, data, gasLimit: '100000', maxFeePerGas: '2000000000', maxPriorityFeePerGas: '1000000000' });
    const refusedAt = (res: { status: number; body: { error: { code: string; details: { fields: { field: string }[] } } } }, code: string, field?: string) => {
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe(code);
      if (field) expect(res.body.error.details.fields[0].field).toBe(field);
    };
    const calls = (from: string, to: string) => [
      [assets.USDC.address, transfers.encodeFunctionData('transferFrom', [from, to, 1n])],
      [assets.KNFT.address, transfers.encodeFunctionData('transferFrom', [from, to, 7n])],
      [assets.KNFT.address, transfers.encodeFunctionData('safeTransferFrom(address,address,uint256)', [from, to, 7n])],
      [assets.KITEM.address, transfers.encodeFunctionData('safeTransferFrom(address,address,uint256,uint256,bytes)', [from, to, 1n, 1n, '0x'])],
      [assets.KITEM.address, transfers.encodeFunctionData('safeBatchTransferFrom', [from, to, [1n], [1n], '0x'])],
    ];
    // The NFT collections are allowed as the contracts called: the recipient their calldata names is what is refused.
    const listed = await wallet({ security: { allowedRecipients: [allowed, assets.KNFT.address, assets.KITEM.address] } });
    for (const [contract, data] of calls(listed.walletAddress, stranger)) refusedAt(await sign(listed, contract, data), 'FORBIDDEN', 'recipient');
    for (const [contract, data] of calls(listed.walletAddress, allowed)) expect((await sign(listed, contract, data)).status).toBe(201);
    const open = await wallet();
    for (const [contract, data] of calls(open.walletAddress, SANCTIONED)) refusedAt(await sign(open, contract, data), 'SANCTIONED_ADDRESS');

    const capped = await wallet({ security: { maxTransferAmount: '2' } });
    const from = capped.walletAddress;
    refusedAt(await sign(capped, assets.USDC.address, transfers.encodeFunctionData('transferFrom', [from, allowed, 2_000_001n])), 'FORBIDDEN', 'amount');
    expect((await sign(capped, assets.USDC.address, transfers.encodeFunctionData('transferFrom', [from, allowed, 2_000_000n]))).status).toBe(201);
    for (const [contract, data] of calls(from, allowed).slice(1)) refusedAt(await sign(capped, contract, data), 'FORBIDDEN', 'to');
  });

  test('a broadcast call books its native value against its `to`, whatever its calldata reads as: the ledger reserves it, the funds must cover it, and the transfer names the address paid', async () => {
    const w = await wallet();
    await fund(w.walletAddress, '1');
    const payee = recipient();
    const named = recipient();
    const approve = erc20.encodeFunctionData('approve', [named, 0n]);
    const tooMuch = await org.core.post(`/v1/master-wallets/${w.id}/sign/transaction`, { blockchainId: chainId, to: payee, value: ethers.parseEther('2').toString(), data: approve, broadcast: true });
    expect(tooMuch.status).toBe(400);
    expect(tooMuch.body.error.code).toBe('INSUFFICIENT_FUNDS');

    const res = await org.core.post(`/v1/master-wallets/${w.id}/sign/transaction`, { blockchainId: chainId, to: payee, value: ethers.parseEther('0.25').toString(), data: approve, broadcast: true });
    expect(res.status).toBe(201);
    const transfer = (await org.core.get(`/v1/transfers/${res.body.data.transferId}`)).body.data;
    expect(transfer.items).toEqual([expect.objectContaining({ recipient: payee, amount: '0.25', asset: expect.objectContaining({ id: assets.ETH.id }) })]);
    const done = await eventually(async () => {
      const s = (await org.core.get(`/v1/signatures/${res.body.data.id}`)).body.data;
      return s.status === 'CONFIRMED' && s;
    }, 30_000, 200);
    expect(ethers.Transaction.from(done.signature)).toMatchObject({ to: payee, value: ethers.parseEther('0.25') });
    expect(await t.keel.services.networks.get(chainId)!.provider.getBalance(payee)).toBe(ethers.parseEther('0.25'));

    // A token's own transfer books the token: it cannot book native value too, so a broadcast one carries none.
    const both = await org.core.post(`/v1/master-wallets/${w.id}/sign/transaction`, { blockchainId: chainId, to: assets.USDC.address, value: '1', data: erc20.encodeFunctionData('transfer', [named, 0n]), broadcast: true });
    expect(both.status).toBe(422);
    expect(both.body.error.details.fields[0].field).toBe('value');
  });

  test("an EIP-3009 transfer authorization is a transfer: held to allowedRecipients and maxTransferAmount as the token's, refused for a token Keel does not know, and signed only with the risk named; a domain of another chain is 422", async () => {
    const treasury = recipient();
    const evmChainId = (await org.core.get('/v1/blockchains')).body.data[0].chainId;
    const open = await wallet();
    const drain = transferWithAuthorization(assets.USDC.address, evmChainId, open.walletAddress, recipient(), 1_000_000_000n);
    const unflagged = await org.core.post(`/v1/master-wallets/${open.id}/sign/typed-data`, { typedData: drain });
    expect(unflagged.status).toBe(403);
    expect(unflagged.body.error).toMatchObject({ code: 'SPENDING_APPROVAL_REFUSED', details: { reason: 'RISK_NOT_ACKNOWLEDGED', findings: ['TRANSFER_AUTHORIZATION'] } });

    const w = await wallet({ security: { allowedRecipients: [treasury], maxTransferAmount: '100', allowSpendingApprovals: true } });
    const authorize = (typedData: object) => org.core.post(`/v1/master-wallets/${w.id}/sign/typed-data`, { typedData, acknowledgeRisk: 'SPENDING_APPROVAL' });
    const stranger = await authorize(transferWithAuthorization(assets.USDC.address, evmChainId, w.walletAddress, recipient(), 1n));
    expect(stranger.status).toBe(403);
    expect(stranger.body.error).toMatchObject({ code: 'FORBIDDEN', details: { fields: [{ field: 'typedData.message.to' }] } });
    const tooMuch = await authorize(transferWithAuthorization(assets.USDC.address, evmChainId, w.walletAddress, treasury, 100_000_001n));
    expect(tooMuch.body.error).toMatchObject({ code: 'FORBIDDEN', details: { fields: [{ field: 'typedData.message.value' }] } });
    const unknownToken = await authorize(transferWithAuthorization(recipient(), evmChainId, w.walletAddress, treasury, 1n));
    expect(unknownToken.body.error).toMatchObject({ code: 'FORBIDDEN', details: { fields: [{ field: 'typedData.domain.verifyingContract' }] } });
    const receive = { ...transferWithAuthorization(assets.USDC.address, evmChainId, w.walletAddress, recipient(), 1n), primaryType: 'ReceiveWithAuthorization' };
    receive.types = { ReceiveWithAuthorization: receive.types.TransferWithAuthorization } as unknown as typeof receive.types;
    expect((await authorize(receive)).body.error).toMatchObject({ code: 'FORBIDDEN', details: { fields: [{ field: 'typedData.message.to' }] } });

    const otherChain = await authorize(transferWithAuthorization(assets.USDC.address, 1, w.walletAddress, treasury, 1n));
    expect(otherChain.status).toBe(422);
    expect(otherChain.body.error.details.fields[0].field).toBe('typedData.domain.chainId');

    const typedData = transferWithAuthorization(assets.USDC.address, evmChainId, w.walletAddress, treasury, 100_000_000n);
    expect((await org.core.post(`/v1/master-wallets/${w.id}/sign/typed-data`, { typedData })).body.error.code).toBe('SPENDING_APPROVAL_REFUSED');
    const signed = await authorize(typedData);
    expect(signed.status).toBe(201);
    expect(signed.body.data).toMatchObject({ status: 'SIGNED', risks: ['TRANSFER_AUTHORIZATION'], acknowledgedRisk: 'SPENDING_APPROVAL' });
    expect(ethers.verifyTypedData(typedData.domain, typedData.types, typedData.message, signed.body.data.signature)).toBe(w.walletAddress);
  });

  test('typed data that makes a call as the signer is that call: a forward request or meta-transaction is held to allowedRecipients and maxTransferAmount as the transaction it carries, and a call Keel cannot read (a Safe transaction) is signed only with the risk named', async () => {
    const treasury = recipient();
    const stranger = recipient();
    const evmChainId = (await org.core.get('/v1/blockchains')).body.data[0].chainId;
    const w = await wallet({ security: { allowedRecipients: [treasury], maxTransferAmount: '100' } });
    const sign = (typedData: object, acknowledgeRisk?: string) => org.core.post(`/v1/master-wallets/${w.id}/sign/typed-data`, { typedData, acknowledgeRisk });
    const pay = (to: string, amount: bigint) => erc20.encodeFunctionData('transfer', [to, amount]);

    const forwardedToStranger = await sign(forwardRequest(evmChainId, w.walletAddress, assets.USDC.address, pay(stranger, 1n)));
    expect(forwardedToStranger.status).toBe(403);
    expect(forwardedToStranger.body.error).toMatchObject({ code: 'FORBIDDEN', details: { fields: [{ field: 'typedData.message.data', error: 'INVALID_FIELD' }] } });
    const forwardedTooMuch = await sign(forwardRequest(evmChainId, w.walletAddress, assets.USDC.address, pay(treasury, 100_000_001n)));
    expect(forwardedTooMuch.body.error).toMatchObject({ code: 'FORBIDDEN', details: { fields: [{ field: 'typedData.message.data' }] } });
    // A call of an address that is no token Keel knows: its `to` is held to the list, whatever its calldata reads as.
    const forwardedCall = await sign(forwardRequest(evmChainId, w.walletAddress, stranger, '0xdeadbeef'));
    expect(forwardedCall.body.error).toMatchObject({ code: 'FORBIDDEN', details: { fields: [{ field: 'typedData.message.to' }] } });
    const metaToStranger = await sign(metaTransaction(assets.USDC.address, evmChainId, w.walletAddress, pay(stranger, 1n)));
    expect(metaToStranger.status).toBe(403);
    expect(metaToStranger.body.error).toMatchObject({ code: 'FORBIDDEN', details: { fields: [{ field: 'typedData.message.functionSignature' }] } });

    const forward = forwardRequest(evmChainId, w.walletAddress, assets.USDC.address, pay(treasury, 100_000_000n));
    const signed = await sign(forward);
    expect(signed.status).toBe(201);
    expect(signed.body.data).toMatchObject({ status: 'SIGNED', risks: [] });
    expect(ethers.verifyTypedData(forward.domain, forward.types, forward.message, signed.body.data.signature)).toBe(w.walletAddress);
    expect((await sign(metaTransaction(assets.USDC.address, evmChainId, w.walletAddress, pay(treasury, 1n)))).body.data).toMatchObject({ status: 'SIGNED', risks: [] });

    // The carried call's grants are found as a transaction's are.
    const open = await wallet({ security: { allowSpendingApprovals: true } });
    const unlimited = await org.core.post(`/v1/master-wallets/${open.id}/sign/typed-data`, { typedData: forwardRequest(evmChainId, open.walletAddress, assets.USDC.address, erc20.encodeFunctionData('approve', [stranger, ethers.MaxUint256])) });
    expect(unlimited.body.error).toMatchObject({ code: 'SPENDING_APPROVAL_REFUSED', details: { reason: 'RISK_NOT_ACKNOWLEDGED', findings: ['UNLIMITED_APPROVE'] } });

    const safe = safeTx(evmChainId, stranger, pay(stranger, 10n ** 30n));
    const unnamed = await org.core.post(`/v1/master-wallets/${open.id}/sign/typed-data`, { typedData: safe });
    expect(unnamed.status).toBe(403);
    expect(unnamed.body.error).toMatchObject({ code: 'SPENDING_APPROVAL_REFUSED', details: { reason: 'RISK_NOT_ACKNOWLEDGED', findings: ['CALL_AUTHORIZATION'] } });
    expect((await sign(safe, 'SPENDING_APPROVAL')).body.error).toMatchObject({ code: 'SPENDING_APPROVAL_REFUSED', details: { reason: 'POLICY_FORBIDS_SPENDING_APPROVALS' } });
    const named = await org.core.post(`/v1/master-wallets/${open.id}/sign/typed-data`, { typedData: safe, acknowledgeRisk: 'SPENDING_APPROVAL' });
    expect(named.status).toBe(201);
    expect(named.body.data).toMatchObject({ status: 'SIGNED', risks: ['CALL_AUTHORIZATION'], acknowledgedRisk: 'SPENDING_APPROVAL' });
  });

  test("Keel's settlement contract is not called nor signed for through the signing API: a transaction (exit, requestExit, a deposit, any call), a forwarded call or meta-transaction of it, and typed data under its domain are refused (403 FORBIDDEN naming the field, recorded); an approval of it as spender is an ordinary approval", async () => {
    const network = t.keel.services.networks.get(chainId)!;
    const deployments = t.keel.services.settlementDeployments;
    await deployments.ensureOnDevChain(network);
    const contract = (await deployments.address(chainId))!;
    const evmChainId = network.spec.chainId;
    const w = await wallet();
    await fund(w.walletAddress, '1');
    const settlement = settlementInterface();
    const calls = {
      exit: { data: settlement.encodeFunctionData('exit', [assets.USDC.address]) },
      requestExit: { data: settlement.encodeFunctionData('requestExit') },
      deposit: { data: settlement.encodeFunctionData('deposit', [assets.USDC.address, 1n]) },
      depositNative: { data: settlement.encodeFunctionData('depositNative'), value: '1000' },
      plainValue: { value: '1000' },
    };
    const refusedAs = (res: { status: number; body: { error: { code: string; message: string; details: object } } }, field: string) => {
      expect(res.status).toBe(403);
      expect(res.body.error).toMatchObject({ code: 'FORBIDDEN', details: { fields: [{ field, error: 'INVALID_FIELD' }], settlementContract: contract } });
      expect(res.body.error.message).toMatch(/trading\/deposits.*keel settlement exit/);
    };
    const nonce = await network.provider.getTransactionCount(w.walletAddress);
    for (const call of Object.values(calls)) {
      // Signed and returned, or sent by Keel's sender: neither, whatever the casing of the address.
      for (const sending of [{ gasLimit: '100000' }, {}, { broadcast: true }]) {
        refusedAs(await org.core.post(`/v1/master-wallets/${w.id}/sign/transaction`, { blockchainId: chainId, to: contract.toLowerCase(), ...call, ...sending }), 'to');
      }
    }
    // A call typed data makes as the signer is the same call.
    refusedAs(await org.core.post(`/v1/master-wallets/${w.id}/sign/typed-data`, { typedData: forwardRequest(evmChainId, w.walletAddress, contract, calls.exit.data) }), 'typedData.message.to');
    refusedAs(await org.core.post(`/v1/master-wallets/${w.id}/sign/typed-data`, { typedData: metaTransaction(contract, evmChainId, w.walletAddress, calls.requestExit.data) }), 'typedData.domain.verifyingContract');
    // Typed data under the contract's own domain is what it honours: a withdrawal of the wallet's trading balance (Keel signs those itself).
    const withdrawal = {
      domain: { name: 'KeelSettlement', version: '1', chainId: evmChainId, verifyingContract: contract },
      types: { Withdrawal: typedFields('uint64 key', 'address account', 'address token', 'uint256 amount', 'address to') },
      primaryType: 'Withdrawal',
      message: { key: '7', account: w.walletAddress, token: assets.USDC.address, amount: '1000000', to: recipient() },
    };
    refusedAs(await org.core.post(`/v1/master-wallets/${w.id}/sign/typed-data`, { typedData: withdrawal }), 'typedData.domain.verifyingContract');
    // Nothing was sent, and each refusal is an outcome on record.
    expect(await network.provider.getTransactionCount(w.walletAddress)).toBe(nonce);
    const listed = (await org.core.get(`/v1/master-wallets/${w.id}/signatures?limit=100`)).body.data as { status: string; errorCode: string }[];
    expect(listed).toHaveLength(Object.keys(calls).length * 3 + 3);
    expect(new Set(listed.map((r) => `${r.status} ${r.errorCode}`))).toEqual(new Set(['REFUSED FORBIDDEN']));

    // The contract Keel replaced still holds balances until `keel settlement migrate` hands them back: refused as well.
    await deployments.deploy(network, devChainAccount(0).privateKey, { replace: true });
    expect(await deployments.address(chainId)).not.toBe(contract);
    refusedAs(await org.core.post(`/v1/master-wallets/${w.id}/sign/transaction`, { blockchainId: chainId, to: contract, ...calls.exit, gasLimit: '100000' }), 'to');

    // An approval with the contract as spender moves nothing (the contract takes a token only in a deposit the wallet itself sends,
    // which the signing API does not): an ordinary approval, under the usual spending rules.
    const revoke = await org.core.post(`/v1/master-wallets/${w.id}/sign/transaction`, { blockchainId: chainId, to: assets.USDC.address, data: erc20.encodeFunctionData('approve', [contract, 0n]), gasLimit: '60000' });
    expect(revoke.status).toBe(201);
  });

  test("a token paid to Keel's settlement contract is refused as on every send path (422 VALIDATION_ERROR naming the field, nothing recorded): a transfer or transferFrom, signed or broadcast, an NFT's transfer, an EIP-3009 authorization, a forwarded transfer", async () => {
    const network = t.keel.services.networks.get(chainId)!;
    await t.keel.services.settlementDeployments.ensureOnDevChain(network);
    const contract = (await t.keel.services.settlementDeployments.address(chainId))!;
    const evmChainId = network.spec.chainId;
    const w = await wallet();
    await fund(w.walletAddress, '1');
    await fund(w.walletAddress, '10', 'USDC');
    const transfers = new ethers.Interface(['function transferFrom(address,address,uint256)', 'function safeTransferFrom(address,address,uint256)']);
    const lost = (res: { status: number; body: { error: { code: string; message: string; details: object } } }, field: string) => {
      expect(res.status).toBe(422);
      expect(res.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { fields: [{ field, error: 'INVALID_FIELD' }], settlementContract: contract } });
      expect(res.body.error.message).toMatch(/belongs to no one and is lost.*trading\/deposits/);
    };
    const pay = erc20.encodeFunctionData('transfer', [contract.toLowerCase(), 1_000_000n]);
    for (const sending of [{ gasLimit: '100000' }, { broadcast: true }]) {
      lost(await org.core.post(`/v1/master-wallets/${w.id}/sign/transaction`, { blockchainId: chainId, to: assets.USDC.address, data: pay, ...sending }), 'recipient');
    }
    for (const [to, data] of [
      [assets.USDC.address, transfers.encodeFunctionData('transferFrom', [w.walletAddress, contract, 1n])],
      [recipient(), pay],
      [assets.KNFT.address, transfers.encodeFunctionData('safeTransferFrom', [w.walletAddress, contract, 1n])],
    ]) {
      lost(await org.core.post(`/v1/master-wallets/${w.id}/sign/transaction`, { blockchainId: chainId, to, data, gasLimit: '100000' }), 'recipient');
    }
    const sign = (typedData: object) => org.core.post(`/v1/master-wallets/${w.id}/sign/typed-data`, { typedData, acknowledgeRisk: 'SPENDING_APPROVAL' });
    lost(await sign(transferWithAuthorization(assets.USDC.address, evmChainId, w.walletAddress, contract, 1n)), 'typedData.message.to');
    lost(await sign(forwardRequest(evmChainId, w.walletAddress, assets.USDC.address, pay)), 'typedData.message.data');
    lost(await sign(metaTransaction(assets.USDC.address, evmChainId, w.walletAddress, pay)), 'typedData.message.functionSignature');
    expect((await org.core.get(`/v1/master-wallets/${w.id}/signatures`)).body.data).toEqual([]);
    expect(await network.provider.getTransactionCount(w.walletAddress, 'pending')).toBe(0);
  });

  test('a counterparty on a sanctions list is refused (403 SANCTIONED_ADDRESS) and the refusal announced', async () => {
    const w = await wallet();
    const res = await org.core.post(`/v1/master-wallets/${w.id}/sign/typed-data`, { typedData: { ...mail, domain: { ...mail.domain, verifyingContract: SANCTIONED } } });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('SANCTIONED_ADDRESS');
    const tx = await org.core.post(`/v1/master-wallets/${w.id}/sign/transaction`, { blockchainId: chainId, to: SANCTIONED.toLowerCase(), gasLimit: '21000' });
    expect(tx.body.error.code).toBe('SANCTIONED_ADDRESS');
    const refused = (await org.core.get(`/v1/master-wallets/${w.id}/signatures`)).body.data;
    expect(refused.map((s: { errorCode: string }) => s.errorCode)).toEqual(['SANCTIONED_ADDRESS', 'SANCTIONED_ADDRESS']);
    await deliveredOnce(refused[0].id, 'master.signed_failed');
  });

  test('an address in typed data written otherwise than as 0x-hex (an ICAP address) is 422 naming the field, before any screen reads it: nothing recorded, nothing held, never a 500', async () => {
    const network = t.keel.services.networks.get(chainId)!;
    await t.keel.services.settlementDeployments.ensureOnDevChain(network);
    const settlement = (await t.keel.services.settlementDeployments.address(chainId))!;
    const evmChainId = network.spec.chainId;
    const icap = (address: string) => ethers.getIcapAddress(address);
    for (const configurations of [undefined, { security: { requireApprovalForTransfers: true } }]) {
      const w = await wallet(configurations);
      const withdrawal = {
        domain: { name: 'KeelSettlement', version: '1', chainId: evmChainId, verifyingContract: icap(settlement) },
        types: { Withdrawal: typedFields('uint64 key', 'address account', 'address token', 'uint256 amount', 'address to') },
        primaryType: 'Withdrawal',
        message: { key: '7', account: w.walletAddress, token: assets.USDC.address, amount: '1000000', to: w.walletAddress },
      };
      const letter = { domain: { name: 'Ether Mail', chainId: evmChainId }, types: { Mail: typedFields('address to', 'string contents') }, primaryType: 'Mail', message: { to: icap(SANCTIONED), contents: 'hi' } };
      const cases: [object, string][] = [
        [withdrawal, 'typedData.domain.verifyingContract'],
        [letter, 'typedData.message.to'],
        [transferWithAuthorization(assets.USDC.address, evmChainId, w.walletAddress, icap(SANCTIONED), 1n), 'typedData.message.to'],
        [forwardRequest(evmChainId, w.walletAddress, icap(settlement), '0x'), 'typedData.message.to'],
      ];
      for (const [typedData, field] of cases) {
        const res = await org.core.post(`/v1/master-wallets/${w.id}/sign/typed-data`, { typedData });
        expect(res.status).toBe(422);
        expect(res.body.error).toMatchObject({ code: 'INVALID_FIELD', details: { fields: [{ field }] } });
      }
      expect((await org.core.get(`/v1/master-wallets/${w.id}/signatures`)).body.data).toEqual([]);
    }
  });

  test('under requireApprovalForTransfers a request is held as a transfer of kind signing; approved by another admin key than the one that asked, it is signed; rejected, it fails', async () => {
    const w = await wallet({ security: { requireApprovalForTransfers: true } });
    const held = await org.core.post(`/v1/master-wallets/${w.id}/sign/message`, { message: 'held' });
    expect(held.status).toBe(201);
    expect(held.body.data).toMatchObject({ status: 'PENDING_APPROVAL', signature: null });
    const transfer = await org.core.get(`/v1/transfers/${held.body.data.transferId}`);
    expect(transfer.body.data).toMatchObject({ kind: 'signing', status: 'PENDING_APPROVAL', items: [] });
    expect(delivered(held.body.data.id)).toEqual([]);

    // Four eyes: the key that asked to sign cannot approve its own request.
    expect((await org.core.post(`/v1/transfers/${held.body.data.transferId}/approve`)).status).toBe(403);
    expect((await (await anotherAdmin(org)).core.post(`/v1/transfers/${held.body.data.transferId}/approve`)).status).toBe(200);
    const signed = (await org.core.get(`/v1/signatures/${held.body.data.id}`)).body.data;
    expect(signed.status).toBe('SIGNED');
    expect(ethers.verifyMessage('held', signed.signature)).toBe(w.walletAddress);
    expect((await org.core.get(`/v1/transfers/${held.body.data.transferId}`)).body.data.status).toBe('CONFIRMED');
    await deliveredOnce(held.body.data.id, 'master.signed_success');

    const second = await org.core.post(`/v1/master-wallets/${w.id}/sign/typed-data`, { typedData: mail });
    expect((await org.core.post(`/v1/transfers/${second.body.data.transferId}/reject`)).status).toBe(200);
    expect((await org.core.get(`/v1/signatures/${second.body.data.id}`)).body.data).toMatchObject({ status: 'REJECTED', signature: null });
    await deliveredOnce(second.body.data.id, 'master.signed_failed');
  });

  test('a write key is refused (403) before its input is read; a read key lists; another organisation gets 404', async () => {
    const w = await wallet();
    const key = async (scopes: string[]) => org.core.with({ apiKey: (await org.core.post('/v1/api-keys', { name: scopes.join('+'), scopes })).body.data.secret, orgId: org.orgId });
    const writer = await key(['read', 'write']);
    for (const kind of ['message', 'typed-data', 'transaction']) {
      const res = await writer.post(`/v1/master-wallets/${w.id}/sign/${kind}`, { nonsense: true });
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('FORBIDDEN');
    }
    const signed = await org.core.post(`/v1/master-wallets/${w.id}/sign/message`, { message: 'mine' });
    expect((await writer.get(`/v1/master-wallets/${w.id}/signatures`)).status).toBe(200);
    // Nor can a write key open the policy for spending grants: security needs the admin scope.
    expect((await writer.patch(`/v1/master-wallets/${w.id}`, { configurations: { security: { allowSpendingApprovals: true } } })).status).toBe(403);

    const foreign = await other.core.post(`/v1/master-wallets/${w.id}/sign/message`, { message: 'not yours' });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe('WALLET_NOT_FOUND');
    expect((await other.core.get(`/v1/signatures/${signed.body.data.id}`)).status).toBe(404);
    expect((await other.core.get(`/v1/master-wallets/${w.id}/signatures`)).status).toBe(404);
    expect((await org.core.get('/v1/signatures/not-a-uuid')).status).toBe(404);
  });

  test('what a deactivated address or an inactive master wallet signed stays listed for audit; neither signs anything more', async () => {
    const w = await wallet();
    const address = (await org.core.post(`/v1/master-wallets/${w.id}/addresses`, {})).body.data;
    const byAddress = (await org.core.post(`/v1/addresses/${address.id}/sign/message`, { message: 'before' })).body.data;
    const byWallet = (await org.core.post(`/v1/master-wallets/${w.id}/sign/message`, { message: 'before' })).body.data;

    expect((await org.core.patch(`/v1/addresses/${address.id}`, { isActive: false })).status).toBe(200);
    const listed = await org.core.get(`/v1/addresses/${address.id}/signatures?from=2000-01-01&to=2999-12-31`);
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((s: { id: string }) => s.id)).toEqual([byAddress.id]);
    expect((await org.core.post(`/v1/addresses/${address.id}/sign/message`, { message: 'after' })).status).toBe(409);

    expect((await org.core.patch(`/v1/master-wallets/${w.id}`, { isActive: false })).status).toBe(200);
    expect((await org.core.get(`/v1/master-wallets/${w.id}/signatures`)).body.data.map((s: { id: string }) => s.id)).toEqual([byWallet.id]);
    expect((await org.core.get(`/v1/addresses/${address.id}/signatures`)).body.data.map((s: { id: string }) => s.id)).toEqual([byAddress.id]);
    expect((await org.core.post(`/v1/master-wallets/${w.id}/sign/message`, { message: 'after' })).status).toBe(409);
    expect((await other.core.get(`/v1/master-wallets/${w.id}/signatures`)).status).toBe(404);
  });

  test('bad input is answered in the error envelope: 400 for a malformed body or address, 422 naming the field', async () => {
    const w = await wallet();
    const malformed = await org.core.request('POST', `/v1/master-wallets/${w.id}/sign/message`, { rawBody: '{"message":', headers: { 'content-type': 'application/json' } });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.code).toBeDefined();
    const badAddress = await org.core.post(`/v1/master-wallets/${w.id}/sign/transaction`, { blockchainId: chainId, to: '0x123' });
    expect(badAddress.status).toBe(400);
    expect(badAddress.body.error).toMatchObject({ code: 'INVALID_ADDRESS', details: { fields: [{ field: 'to' }] } });
    const badTyped = await org.core.post(`/v1/master-wallets/${w.id}/sign/typed-data`, { typedData: { ...mail, types: { Mail: [{ name: 'from', type: 'nonsense' }] } } });
    expect(badTyped.status).toBe(422);
    expect(badTyped.body.error.details.fields[0].field).toBe('typedData');
    const reordered = await org.core.post(`/v1/master-wallets/${w.id}/sign/typed-data`, { typedData: { ...mail, types: { ...mail.types, EIP712Domain: [...mail.types.EIP712Domain].reverse() } } });
    expect(reordered.status).toBe(422);
    expect(reordered.body.error.details.fields[0].field).toBe('typedData.types.EIP712Domain');
    // PostgreSQL text cannot hold NUL: refused at the edge, over REST and GraphQL, never a 500.
    expect((await org.core.post(`/v1/master-wallets/${w.id}/sign/message`, { message: 'a\u0000b' })).status).toBe(422);
    const nul = await org.core.graphql('mutation($id: ID!, $t: JSONObject!) { signTypedDataWithMasterWallet(id: $id, input: { typedData: $t }) { id } }', { id: w.id, t: { ...mail, message: { from: 'a\u0000', contents: 'x' } } });
    expect(nul.body.errors[0].extensions.code).toBe('INVALID_FIELD');
    const badHex = await org.core.post(`/v1/master-wallets/${w.id}/sign/message`, { message: 'zz', encoding: 'HEX' });
    expect(badHex.status).toBe(422);
    const broadcastWithNonce = await org.core.post(`/v1/master-wallets/${w.id}/sign/transaction`, { blockchainId: chainId, to: recipient(), nonce: 1, broadcast: true });
    expect(broadcastWithNonce.body.error.details.fields[0].field).toBe('nonce');
    // None of these is an outcome: nothing recorded, nothing announced.
    expect((await org.core.get(`/v1/master-wallets/${w.id}/signatures`)).body.data).toEqual([]);
  });

  test('arbitrary typed data and transaction fields get a signature or a 4xx envelope, never a 5xx', async () => {
    const w = await wallet();
    const field = fc.oneof(fc.jsonValue(), fc.constantFrom('0x', '0xzz', '-1', '1e18', '0x' + 'ab'.repeat(40), ethers.MaxUint256.toString() + '0'));
    const typedData = fc.record({ domain: fc.oneof(fc.object(), fc.constant(mail.domain)), types: fc.oneof(fc.object(), fc.constant(mail.types), fc.dictionary(fc.string(), fc.array(fc.record({ name: fc.string(), type: fc.constantFrom('uint256', 'address', 'string', 'bytes32', 'Mail', 'uint7', 'string[]') })))), primaryType: fc.oneof(fc.string(), fc.constant('Mail')), message: fc.oneof(fc.object(), fc.constant(mail.message)) }, { requiredKeys: [] });
    await fc.assert(
      fc.asyncProperty(typedData, async (td) => {
        const res = await org.core.post(`/v1/master-wallets/${w.id}/sign/typed-data`, { typedData: td });
        expect([201, 400, 403, 422]).toContain(res.status);
        if (res.status !== 201) expect(res.body.error.code).toMatch(/^[A-Z_]+$/);
      }),
      { numRuns: 60 },
    );
    await fc.assert(
      fc.asyncProperty(fc.record({ to: field, value: field, data: field, gasLimit: field, nonce: field, maxFeePerGas: field, broadcast: fc.jsonValue() }, { requiredKeys: [] }), async (tx) => {
        const res = await org.core.post(`/v1/master-wallets/${w.id}/sign/transaction`, { blockchainId: chainId, ...tx });
        expect([201, 400, 403, 422]).toContain(res.status);
      }),
      { numRuns: 60 },
    );
  });

  test('over GraphQL: a deposit address signs typed data and a transaction; a write key is refused before its input is read', async () => {
    const w = await wallet();
    const address = (await org.core.post(`/v1/master-wallets/${w.id}/addresses`, {})).body.data;
    const typed = await org.core.graphql('mutation($id: ID!, $t: JSONObject!) { signTypedDataWithAddress(id: $id, input: { typedData: $t }) { id status signer signature } }', { id: address.id, t: mail });
    expect(typed.body.errors).toBeUndefined();
    const signedTyped = typed.body.data.signTypedDataWithAddress;
    expect(ethers.verifyTypedData(mail.domain, withoutDomainType(mail.types), mail.message, signedTyped.signature)).toBe(address.address);
    const tx = await org.core.graphql('mutation($id: ID!, $c: ID!) { signTransactionWithAddress(id: $id, input: { blockchainId: $c, to: "0x2F2FC0ffee00000000000000000000000000000B", value: "5", gasLimit: "21000" }) { signature } }', { id: address.id, c: chainId });
    expect(ethers.Transaction.from(tx.body.data.signTransactionWithAddress.signature).from).toBe(address.address);
    const listed = await org.core.graphql('query($id: ID!) { addressSignatures(id: $id, kind: TRANSACTION) { total items { kind status } } }', { id: address.id });
    expect(listed.body.data.addressSignatures).toEqual({ total: 1, items: [{ kind: 'TRANSACTION', status: 'SIGNED' }] });

    const writer = org.core.with({ apiKey: (await org.core.post('/v1/api-keys', { name: 'gql-writer', scopes: ['read', 'write'] })).body.data.secret, orgId: org.orgId });
    const refused = await writer.graphql('mutation($id: ID!) { signMessageWithAddress(id: $id, input: { message: 42 }) { id } }', { id: address.id });
    expect(refused.body.errors[0].extensions.code).toBe('FORBIDDEN');
  });

  test('a held broadcast transaction is sent by the sender only once approved', async () => {
    const w = await wallet({ security: { requireApprovalForTransfers: true } });
    await fund(w.walletAddress, '1');
    const to = recipient();
    const held = await org.core.post(`/v1/master-wallets/${w.id}/sign/transaction`, { blockchainId: chainId, to, value: '12345', broadcast: true });
    expect(held.body.data).toMatchObject({ status: 'PENDING_APPROVAL', broadcast: true });
    const provider = t.keel.services.networks.get(chainId)!.provider;
    await new Promise((r) => setTimeout(r, 500));
    expect(await provider.getTransactionCount(w.walletAddress)).toBe(0);
    expect((await (await anotherAdmin(org)).core.post(`/v1/transfers/${held.body.data.transferId}/approve`)).body.data.status).toBe('QUEUED');
    const done = await eventually(async () => {
      const s = (await org.core.get(`/v1/signatures/${held.body.data.id}`)).body.data;
      return s.status === 'CONFIRMED' && s;
    }, 30_000, 200);
    expect(ethers.Transaction.from(done.signature).from).toBe(w.walletAddress);
    expect(await provider.getBalance(to)).toBe(12345n);
    await deliveredOnce(done.id, 'master.signed_success');
  });

  test('a broadcast transaction goes through the transaction sender and is mined once; a retry with the same Idempotency-Key sends nothing more', async () => {
    const w = await wallet();
    await fund(w.walletAddress, '1');
    const to = recipient();
    const body = { blockchainId: chainId, to, value: ethers.parseEther('0.1').toString(), broadcast: true };
    const headers = { 'Idempotency-Key': `sign-${to}` };
    const res = await org.core.post(`/v1/master-wallets/${w.id}/sign/transaction`, body, headers);
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ status: 'QUEUED', broadcast: true });
    const again = await org.core.post(`/v1/master-wallets/${w.id}/sign/transaction`, body, headers);
    expect(again.body.data.id).toBe(res.body.data.id);

    const done = await eventually(async () => {
      const s = (await org.core.get(`/v1/signatures/${res.body.data.id}`)).body.data;
      return s.status === 'CONFIRMED' && s;
    }, 30_000, 200);
    const tx = ethers.Transaction.from(done.signature);
    expect(tx.from).toBe(w.walletAddress);
    const provider = t.keel.services.networks.get(chainId)!.provider;
    expect(await provider.getBalance(to)).toBe(ethers.parseEther('0.1'));
    expect(await provider.getTransactionCount(w.walletAddress)).toBe(1);
    expect((await provider.getTransactionReceipt(done.txHash))!.status).toBe(1);
    expect((await org.core.get(`/v1/transfers/${done.transferId}`)).body.data).toMatchObject({ kind: 'signing', status: 'CONFIRMED' });
    expect((await deliveredOnce(done.id, 'master.signed_success')).data).toMatchObject({ signer: w.walletAddress, txHash: tx.hash, signature: tx.serialized });
  });
});

describe('a broadcast signing request stuck below the market fee', () => {
  let k: OwnChainKeel;

  beforeAll(async () => {
    k = await startKeelOnOwnChain(31_361, 1, { CHAIN_POLL_INTERVAL_MS: 100, TRANSFER_POLL_INTERVAL_MS: 100, TRANSFER_FEE_BUMP_AFTER_MS: 300 });
  }, 60_000);
  afterAll(() => k?.stop());

  test('is bumped by the transaction sender with the same nonce; the record ends with the mined transaction, announced once', async () => {
    const { t, chain } = k;
    const org = await t.createOrg();
    const [chainId] = (await org.core.get('/v1/blockchains')).body.data.map((c: { id: string }) => c.id);
    const w = (await org.core.post('/v1/master-wallets', { blockchainId: chainId, name: 'Stuck' })).body.data;
    const faucet = await org.core.post('/v1/dev/faucet', { blockchainId: chainId, address: w.walletAddress, amount: '5' });
    await eventually(async () => (await t.keel.platform.db('chain_transfers').where({ txHash: faucet.body.data.txHash, direction: 'incoming' }).first()) !== undefined, 30_000);

    await setAutomine(chain.rpcUrl, false);
    const to = recipient();
    const res = await org.core.post(`/v1/master-wallets/${w.id}/sign/transaction`, { blockchainId: chainId, to, value: '777', broadcast: true });
    expect(res.status).toBe(201);
    const first = await eventually(async () => {
      const s = (await org.core.get(`/v1/signatures/${res.body.data.id}`)).body.data;
      return s.status === 'SIGNED' && s;
    });
    const line = async () => (await org.core.get(`/v1/transfers/${first.transferId}`)).body.data.items[0];
    const signed = await eventually(async () => {
      const item = await line();
      return item.txHash && item;
    });
    await rpc(chain.rpcUrl, 'hardhat_setNextBlockBaseFeePerGas', [ethers.toQuantity(ethers.parseUnits('500', 'gwei'))]);
    await mine(chain.rpcUrl, 1);
    // The bump becomes the line's transaction once the node has taken it.
    const bumped = await eventually(async () => {
      const item = await line();
      return item.txHash !== signed.txHash && item;
    });
    expect(bumped.replacedTxHashes).toEqual([signed.txHash]);
    const provider = t.keel.services.networks.get(chainId)!.provider;
    expect(await provider.getTransaction(bumped.txHash)).not.toBeNull();
    await setAutomine(chain.rpcUrl, true);
    await mine(chain.rpcUrl, 2);

    const done = await eventually(async () => {
      const s = (await org.core.get(`/v1/signatures/${res.body.data.id}`)).body.data;
      return s.status === 'CONFIRMED' && s;
    }, 30_000, 200);
    expect(done.txHash).toBe(bumped.txHash);
    expect(done.txHash).not.toBe(first.txHash);
    const mined = ethers.Transaction.from(done.signature);
    expect([mined.hash, mined.from, mined.nonce]).toEqual([done.txHash, w.walletAddress, ethers.Transaction.from(first.signature).nonce]);
    expect(await provider.getBalance(to)).toBe(777n);
    const events = await t.keel.platform.db('outbox_events').whereIn('type', ['master.signed_success', 'master.signed_failed']).select('envelope');
    expect(events.map((e) => e.envelope.data).filter((d) => d.signatureId === done.id).map((d) => d.status)).toEqual(['SIGNED']);
  });
});
