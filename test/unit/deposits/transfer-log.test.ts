import { ethers } from 'ethers';
import { decodeTransferLog, ERC1155_BATCH_TOPIC, ERC1155_SINGLE_TOPIC, ERC20_TRANSFER_TOPIC } from '../../../src/platform/chain-port/evm-chain';

const coder = ethers.AbiCoder.defaultAbiCoder();
const word = (address: string) => ethers.zeroPadValue(address, 32);
const [operator, from, to] = [ethers.Wallet.createRandom().address, ethers.Wallet.createRandom().address, ethers.Wallet.createRandom().address];

describe('decodeTransferLog', () => {
  test('an ERC-20 Transfer of a token, not of a collection', () => {
    const log = { topics: [ERC20_TRANSFER_TOPIC, word(from), word(to)], data: ethers.toBeHex(250n, 32) };
    expect(decodeTransferLog(log, false)).toEqual([{ from, to, rawValue: 250n, batchIndex: 0 }]);
    expect(decodeTransferLog(log, true)).toEqual([]);
  });

  test('an ERC-20 Transfer of zero moves nothing (anyone can send one to any address)', () => {
    const log = { topics: [ERC20_TRANSFER_TOPIC, word(from), word(to)], data: ethers.ZeroHash };
    expect(decodeTransferLog(log, false)).toEqual([]);
  });

  test('an ERC-721 Transfer (token id indexed) of a collection, not of a token', () => {
    const log = { topics: [ERC20_TRANSFER_TOPIC, word(from), word(to), ethers.toBeHex(77n, 32)], data: '0x' };
    expect(decodeTransferLog(log, true)).toEqual([{ from, to, rawValue: 1n, tokenId: 77n, batchIndex: 0 }]);
    expect(decodeTransferLog(log, false)).toEqual([]);
  });

  test('an ERC-1155 TransferSingle, and a TransferBatch as one entry per id at its position (zero amounts left out)', () => {
    const single = { topics: [ERC1155_SINGLE_TOPIC, word(operator), word(from), word(to)], data: coder.encode(['uint256', 'uint256'], [9n, 12n]) };
    expect(decodeTransferLog(single, true)).toEqual([{ from, to, rawValue: 12n, tokenId: 9n, batchIndex: 0 }]);
    const batch = { topics: [ERC1155_BATCH_TOPIC, word(operator), word(from), word(to)], data: coder.encode(['uint256[]', 'uint256[]'], [[1n, 2n, 3n, 1n], [5n, 0n, 7n, 2n]]) };
    expect(decodeTransferLog(batch, true)).toEqual([
      { from, to, rawValue: 5n, tokenId: 1n, batchIndex: 0 },
      { from, to, rawValue: 7n, tokenId: 3n, batchIndex: 2 },
      { from, to, rawValue: 2n, tokenId: 1n, batchIndex: 3 },
    ]);
    expect(decodeTransferLog(batch, false)).toEqual([]);
  });

  test('malformed logs move nothing', () => {
    const header = [ERC1155_BATCH_TOPIC, word(operator), word(from), word(to)];
    expect(decodeTransferLog({ topics: header, data: '0x1234' }, true)).toEqual([]);
    expect(decodeTransferLog({ topics: header, data: coder.encode(['uint256[]', 'uint256[]'], [[1n, 2n], [5n]]) }, true)).toEqual([]);
    expect(decodeTransferLog({ topics: header.slice(0, 3), data: coder.encode(['uint256', 'uint256'], [1n, 1n]) }, true)).toEqual([]);
    expect(decodeTransferLog({ topics: [ethers.id('Approval(address,address,uint256)'), word(from), word(to)], data: ethers.toBeHex(1n, 32) }, false)).toEqual([]);
  });
});
