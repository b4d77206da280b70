import { ethers } from 'ethers';
import { addressesIn, decodeCall, messageRisks, refuseNonHexAddresses, spendingRefusal, transactionRisks, typedDataCall, typedDataRisks } from '../../../src/modules/signing/signing-checks';

const spender = '0x1111111111111111111111111111111111111111';
const erc20 = new ethers.Interface(['function transfer(address,uint256)', 'function approve(address,uint256)', 'function increaseAllowance(address,uint256)']);
const nft = new ethers.Interface(['function setApprovalForAll(address,bool)']);
const permit2 = new ethers.Interface(['function approve(address token, address spender, uint160 amount, uint48 expiration)']);

const permitTypes = {
  EIP712Domain: [{ name: 'name', type: 'string' }],
  Permit: [
    { name: 'owner', type: 'address' },
    { name: 'spender', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'nonce', type: 'uint256' },
    { name: 'deadline', type: 'uint256' },
  ],
};

describe('calldata decoding', () => {
  test('ERC-20 transfer, approve and increaseAllowance, setApprovalForAll and Permit2 approve are read; anything else is other', () => {
    expect(decodeCall('0x')).toEqual({ kind: 'native' });
    expect(decodeCall(erc20.encodeFunctionData('transfer', [spender, 5n]))).toEqual({ kind: 'erc20_transfer', recipient: spender, amount: 5n });
    expect(decodeCall(erc20.encodeFunctionData('approve', [spender, 7n]))).toEqual({ kind: 'erc20_approve', spender, amount: 7n });
    expect(decodeCall(erc20.encodeFunctionData('increaseAllowance', [spender, 9n]))).toEqual({ kind: 'erc20_approve', spender, amount: 9n });
    expect(decodeCall(nft.encodeFunctionData('setApprovalForAll', [spender, true]))).toEqual({ kind: 'set_approval_for_all', operator: spender, approved: true });
    expect(decodeCall(permit2.encodeFunctionData('approve', [spender, spender, 1n, 0n]))).toMatchObject({ kind: 'permit2_approve', amount: 1n });
    expect(decodeCall('0xdeadbeef')).toEqual({ kind: 'other' });
    // A known selector with broken arguments is not trusted as that call.
    expect(decodeCall(erc20.encodeFunctionData('transfer', [spender, 5n]).slice(0, 20))).toEqual({ kind: 'other' });
  });
});

describe('calldata decoding of transfers that name their recipient', () => {
  const from = '0x2222222222222222222222222222222222222222';
  const nfts = new ethers.Interface([
    'function transferFrom(address,address,uint256)',
    'function safeTransferFrom(address,address,uint256)',
    'function safeTransferFrom(address,address,uint256,bytes)',
    'function safeTransferFrom(address,address,uint256,uint256,bytes)',
    'function safeBatchTransferFrom(address,address,uint256[],uint256[],bytes)',
  ]);
  test("transferFrom is read with its recipient and its amount (an ERC-721's, of the same selector, names its token id there)", () => {
    expect(decodeCall(nfts.encodeFunctionData('transferFrom', [from, spender, 5n]))).toEqual({ kind: 'transfer_from', recipient: spender, amount: 5n });
  });
  test("an NFT's safeTransferFrom (ERC-721, ERC-1155) and safeBatchTransferFrom are read with their recipient", () => {
    expect(decodeCall(nfts.encodeFunctionData('safeTransferFrom(address,address,uint256)', [from, spender, 77n]))).toEqual({ kind: 'nft_transfer', recipient: spender });
    expect(decodeCall(nfts.encodeFunctionData('safeTransferFrom(address,address,uint256,bytes)', [from, spender, 77n, '0x01']))).toEqual({ kind: 'nft_transfer', recipient: spender });
    expect(decodeCall(nfts.encodeFunctionData('safeTransferFrom(address,address,uint256,uint256,bytes)', [from, spender, 77n, 3n, '0x']))).toEqual({ kind: 'nft_transfer', recipient: spender });
    expect(decodeCall(nfts.encodeFunctionData('safeBatchTransferFrom', [from, spender, [1n, 2n], [3n, 4n], '0x']))).toEqual({ kind: 'nft_transfer', recipient: spender });
  });
});

describe('spending grants in transactions', () => {
  const approve = (amount: bigint) => decodeCall(erc20.encodeFunctionData('approve', [spender, amount]));
  test('an unlimited approve is risky whatever the holdings', () => {
    expect(transactionRisks(approve(ethers.MaxUint256), 10n ** 30n)).toEqual(['UNLIMITED_APPROVE']);
    expect(transactionRisks(approve(2n ** 255n), 10n ** 30n)).toEqual(['UNLIMITED_APPROVE']);
  });
  test('an approve above what the address holds is risky; at or below it, or revoking (0), is not', () => {
    expect(transactionRisks(approve(101n), 100n)).toEqual(['APPROVE_ABOVE_HOLDINGS']);
    expect(transactionRisks(approve(100n), 100n)).toEqual([]);
    expect(transactionRisks(approve(0n), 0n)).toEqual([]);
    // An unregistered token: holdings unknown, so any non-zero approve counts as large.
    expect(transactionRisks(approve(1n), null)).toEqual(['APPROVE_ABOVE_HOLDINGS']);
  });
  test('setApprovalForAll(true) and a Permit2 approve are risky; setApprovalForAll(false) and plain sends are not', () => {
    expect(transactionRisks(decodeCall(nft.encodeFunctionData('setApprovalForAll', [spender, true])), null)).toEqual(['SET_APPROVAL_FOR_ALL']);
    expect(transactionRisks(decodeCall(nft.encodeFunctionData('setApprovalForAll', [spender, false])), null)).toEqual([]);
    expect(transactionRisks(decodeCall(permit2.encodeFunctionData('approve', [spender, spender, 5n, 0n])), null)).toEqual(['PERMIT2']);
    expect(transactionRisks(decodeCall(erc20.encodeFunctionData('transfer', [spender, 10n ** 40n])), 0n)).toEqual([]);
    expect(transactionRisks(decodeCall('0x'), 0n)).toEqual([]);
  });
});

describe('spending grants in typed data', () => {
  test('an EIP-2612 Permit, any Permit2 message and a primary type with a spender or operator are risky', () => {
    expect(typedDataRisks({ domain: { name: 'USD Coin' }, types: permitTypes, primaryType: 'Permit', message: {} })).toEqual(['PERMIT']);
    expect(typedDataRisks({ domain: { name: 'Permit2' }, types: { PermitSingle: [{ name: 'details', type: 'bytes32' }] }, primaryType: 'PermitSingle', message: {} })).toEqual(['PERMIT2']);
    expect(typedDataRisks({ domain: { name: 'Permit2' }, types: { Anything: [{ name: 'x', type: 'uint256' }] }, primaryType: 'Anything', message: {} })).toEqual(['PERMIT2']);
    expect(typedDataRisks({ domain: {}, types: { Delegation: [{ name: 'operator', type: 'address' }] }, primaryType: 'Delegation', message: {} })).toEqual(['SPENDER_FIELD']);
  });
  test('typed data that authorises a call Keel cannot read as the signer\'s own (a Safe transaction, a user operation, any bytes data, functionSignature or callData) is CALL_AUTHORIZATION', () => {
    const safeTx = { to: 'address', value: 'uint256', data: 'bytes', operation: 'uint8', nonce: 'uint256' };
    const typesOf = (fields: Record<string, string>) => Object.entries(fields).map(([name, type]) => ({ name, type }));
    expect(typedDataRisks({ domain: {}, types: { SafeTx: typesOf(safeTx) }, primaryType: 'SafeTx', message: {} })).toEqual(['CALL_AUTHORIZATION']);
    expect(typedDataRisks({ domain: {}, types: { UserOperation: typesOf({ sender: 'address', callData: 'bytes' }) }, primaryType: 'UserOperation', message: {} })).toEqual(['CALL_AUTHORIZATION']);
    // A call nested in a member struct counts too.
    expect(typedDataRisks({ domain: {}, types: { Batch: typesOf({ calls: 'Call[]' }), Call: typesOf({ target: 'address', calldata: 'bytes' }) }, primaryType: 'Batch', message: {} })).toEqual(['CALL_AUTHORIZATION']);
    // Not a readable forward request: the target is not an address.
    expect(typedDataRisks({ domain: {}, types: { ForwardRequest: typesOf({ to: 'bytes32', data: 'bytes' }) }, primaryType: 'ForwardRequest', message: {} })).toEqual(['CALL_AUTHORIZATION']);
  });
  test("a forward request (ERC-2771) and a native meta-transaction are read as the call they make as the signer, to be checked as a transaction is", () => {
    const data = erc20.encodeFunctionData('transfer', [spender, 5n]);
    const forward = { domain: { chainId: 1 }, types: { ForwardRequest: [{ name: 'from', type: 'address' }, { name: 'to', type: 'address' }, { name: 'value', type: 'uint256' }, { name: 'gas', type: 'uint256' }, { name: 'nonce', type: 'uint256' }, { name: 'data', type: 'bytes' }] }, primaryType: 'ForwardRequest', message: { from: spender, to: spender.toLowerCase(), value: '7', gas: '1', nonce: '0', data } };
    expect(typedDataRisks(forward)).toEqual([]);
    expect(typedDataCall(forward)).toEqual({ call: { to: spender, value: 7n, data }, fields: { to: 'typedData.message.to', value: 'typedData.message.value', recipient: 'typedData.message.data', amount: 'typedData.message.data' } });
    const meta = { domain: { verifyingContract: spender }, types: { MetaTransaction: [{ name: 'nonce', type: 'uint256' }, { name: 'from', type: 'address' }, { name: 'functionSignature', type: 'bytes' }] }, primaryType: 'MetaTransaction', message: { nonce: '0', from: spender, functionSignature: data } };
    expect(typedDataRisks(meta)).toEqual([]);
    expect(typedDataCall(meta)).toMatchObject({ call: { to: spender, value: 0n, data }, fields: { to: 'typedData.domain.verifyingContract', recipient: 'typedData.message.functionSignature' } });
    expect(typedDataCall({ domain: {}, types: { Mail: [{ name: 'contents', type: 'string' }] }, primaryType: 'Mail', message: {} })).toBeNull();
  });
  test('an ordinary typed message (a login, an order) grants nothing', () => {
    expect(typedDataRisks({ domain: { name: 'Example' }, types: { Mail: [{ name: 'from', type: 'address' }, { name: 'contents', type: 'string' }] }, primaryType: 'Mail', message: {} })).toEqual([]);
  });
});

describe('spending grants in messages', () => {
  test('a message of exactly 32 bytes may be a digest (a Safe transaction\'s hash), hex or text: DIGEST_SIGNATURE', () => {
    expect(messageRisks(ethers.getBytes(ethers.keccak256('0x1234')))).toEqual(['DIGEST_SIGNATURE']);
    expect(messageRisks(ethers.toUtf8Bytes('x'.repeat(32)))).toEqual(['DIGEST_SIGNATURE']);
  });
  test('any other length grants nothing', () => {
    for (const length of [0, 4, 31, 33, 65]) expect(messageRisks(new Uint8Array(length))).toEqual([]);
  });
});

describe('the acknowledgement rule', () => {
  test('nothing risky: signed whatever the flag and the policy', () => {
    expect(spendingRefusal([], null, false)).toBeNull();
  });
  test('risky: refused unless the request names SPENDING_APPROVAL AND the policy allows it', () => {
    expect(spendingRefusal(['PERMIT'], null, true)).toBe('RISK_NOT_ACKNOWLEDGED');
    expect(spendingRefusal(['PERMIT'], 'SOMETHING_ELSE', true)).toBe('RISK_NOT_ACKNOWLEDGED');
    expect(spendingRefusal(['PERMIT'], 'SPENDING_APPROVAL', false)).toBe('POLICY_FORBIDS_SPENDING_APPROVALS');
    expect(spendingRefusal(['UNLIMITED_APPROVE'], 'SPENDING_APPROVAL', true)).toBeNull();
  });
});

test('addresses are found anywhere in typed data, checksummed, once each', () => {
  const lower = spender.toLowerCase();
  expect([...addressesIn({ a: lower, b: [spender, { c: '0x2222222222222222222222222222222222222222' }], n: 5, s: 'hello' })]).toEqual([spender, '0x2222222222222222222222222222222222222222']);
});

describe('addresses in typed data', () => {
  const types = { Order: [{ name: 'owner', type: 'address' }, { name: 'legs', type: 'Leg[]' }, { name: 'note', type: 'string' }], Leg: [{ name: 'to', type: 'address' }, { name: 'amount', type: 'uint256' }] };
  const order = (owner: string, to: string, verifyingContract = spender) => ({ domain: { verifyingContract }, types, primaryType: 'Order', message: { owner, legs: [{ to: spender, amount: '1' }, { to, amount: '2' }], note: ethers.getIcapAddress(spender) } });
  const refusal = (typed: ReturnType<typeof order>) => {
    try {
      refuseNonHexAddresses(typed, typed.types);
      return null;
    } catch (e) {
      return (e as { details?: { fields: { field: string }[] } }).details?.fields[0].field;
    }
  };
  test('are 0x and 40 hex digits, in any case, wherever they are', () => {
    expect(refusal(order(spender.toLowerCase(), spender))).toBeNull();
  });
  test('written otherwise (an ICAP address, an ENS name) are refused naming the field: ethers would read or look up an address the screens did not see', () => {
    expect(refusal(order(ethers.getIcapAddress(spender), spender))).toBe('typedData.message.owner');
    expect(refusal(order(spender, 'vitalik.eth'))).toBe('typedData.message.legs.1.to');
    expect(refusal(order(spender, spender, ethers.getIcapAddress(spender)))).toBe('typedData.domain.verifyingContract');
  });
});
