// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {IERC20Permit} from "@openzeppelin/contracts/token/ERC20/extensions/IERC20Permit.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {ReentrancyGuardTransient} from "@openzeppelin/contracts/utils/ReentrancyGuardTransient.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {EIP712} from "@openzeppelin/contracts/utils/cryptography/EIP712.sol";
import {ECDSA} from "@openzeppelin/contracts/utils/cryptography/ECDSA.sol";

/**
 * @notice Keel's settlement contract: the trading balances of Keel's wallets, per (account, token),
 * held here between trades. Orders are admitted only against what is here, so a matched trade
 * settles by moving balances inside the contract: nothing a counterparty's wallet can refuse.
 *
 * Rules the contract enforces (whatever the operator sends):
 * - anyone may deposit for an account (ERC-20 after an approval, or the native coin); what arrives
 *   is credited to that account;
 * - only the operator may settle, and a batch applies all of its deltas or none, moving balances
 *   inside the contract only (no token transfer);
 * - a trade key settles at most once (a bitmap of settled keys; a replayed batch reverts);
 * - per asset a batch cannot create value: what accounts receive is at most what accounts pay,
 *   and the difference (the trading fees) is credited to the fee recipient;
 * - no balance goes below zero;
 * - funds leave an account only with its owner's signature: a withdrawal the account signed
 *   (EIP-712, to its own or another address, each withdrawal key used once) that the operator
 *   submits, or the account's own exit after `exitDelay` if the operator stops.
 *
 * Asset address(0) is the chain's native coin.
 */
contract KeelSettlement is ReentrancyGuardTransient, Ownable, EIP712 {
    using SafeERC20 for IERC20;

    address public constant NATIVE = address(0);
    /// The layout of `settle`'s calldata this contract reads (2: per balance slot); Keel settles only through the version it speaks.
    uint256 public constant VERSION = 2;
    bytes32 public constant WITHDRAWAL_TYPEHASH =
        keccak256("Withdrawal(uint64 key,address account,address token,uint256 amount,address to)");

    /// A withdrawal the account signed: `amount` of `token` from its balance here to `to`, once (`key`).
    struct Withdrawal {
        uint64 key;
        address account;
        address token;
        uint256 amount;
        address to;
    }

    address public operator;
    address public feeRecipient;
    /// Seconds between an account's exit request and its own withdrawal.
    uint256 public immutable exitDelay;

    /// Tokens by index: the native coin is 0, every other token gets the next index when it first
    /// arrives. Balances are 128 bits, two tokens per storage slot (index >> 1): an account trading
    /// a market whose tokens share a slot (the native coin and the first token, say ETH and USDC)
    /// has one slot written per batch, not two.
    mapping(address => uint256) public tokenIndex;
    /// Tokens by index, from index 1 (tokens[index - 1]).
    address[] private tokens;
    /// account => index >> 1 => two 128-bit balances (index even: low half, odd: high half).
    mapping(address => mapping(uint256 => uint256)) private balanceSlots;
    /// trade key >> 8 => bitmap of settled keys.
    mapping(uint256 => uint256) private settledWords;
    mapping(address => uint256) public exitRequestedAt;
    /// withdrawal key >> 8 => bitmap of withdrawal keys already paid out.
    mapping(uint256 => uint256) private withdrawnWords;

    event Deposited(address indexed account, address indexed token, uint256 amount);
    event Withdrawn(uint64 indexed key, address indexed account, address indexed token, uint256 amount, address to);
    event Released(address indexed account, address indexed token, uint256 amount);
    event BatchSettled(bytes16 indexed batchId, uint256 tradeCount, bytes32 tradesHash);
    event ExitRequested(address indexed account, uint256 availableAt);
    event OperatorChanged(address operator);
    event FeeRecipientChanged(address feeRecipient);

    error NotOperator();
    error TradeAlreadySettled(uint64 tradeKey);
    error InsufficientBalance(address account, address token, uint256 balance, uint256 needed);
    error UnsortedDeltas(uint256 index);
    error ValueCreated(address token);
    error BadTradeKeys();
    error ExitNotReady(uint256 availableAt);
    error NativeTransferFailed();
    error AlreadyWithdrawn(uint64 key);
    error NotSignedByAccount(uint64 key);
    error LengthMismatch();
    error BadDeltas();
    error WrongTokenPair(address low, address high);
    error BalanceOverflow(address account, address token);

    modifier onlyOperator() {
        if (msg.sender != operator) revert NotOperator();
        _;
    }

    constructor(address operator_, address feeRecipient_, uint256 exitDelay_) Ownable(msg.sender) EIP712("KeelSettlement", "1") {
        operator = operator_;
        feeRecipient = feeRecipient_;
        exitDelay = exitDelay_;
    }

    function setOperator(address operator_) external onlyOwner {
        operator = operator_;
        emit OperatorChanged(operator_);
    }

    function setFeeRecipient(address feeRecipient_) external onlyOwner {
        feeRecipient = feeRecipient_;
        emit FeeRecipientChanged(feeRecipient_);
    }

    // ---- deposits: funds in, credited to an account ----

    function deposit(address token, uint256 amount) external {
        depositFor(msg.sender, token, amount);
    }

    /// The sender's tokens (approved first), credited to `account`: what actually arrived.
    function depositFor(address account, address token, uint256 amount) public nonReentrant {
        _depositToken(account, token, amount);
    }

    function depositNative() external payable {
        depositNativeFor(msg.sender);
    }

    function depositNativeFor(address account) public payable {
        _depositNative(account);
    }

    /**
     * One transaction for what a wallet brings to a market: `amount` of `token` and the coin sent
     * with the call, both credited to the sender. With `deadline` nonzero the token's EIP-2612
     * permit for exactly `amount`, signed by the sender, is used first instead of an approval (a
     * permit that fails, because someone submitted it first or the token has none, is ignored: the
     * transfer then needs an allowance as `deposit` does). `amount` 0: the coin only.
     */
    function depositWithCoin(address token, uint256 amount, uint256 deadline, uint8 v, bytes32 r, bytes32 s) external payable nonReentrant {
        if (deadline != 0) {
            try IERC20Permit(token).permit(msg.sender, address(this), amount, deadline, v, r, s) {} catch {}
        }
        if (amount != 0) _depositToken(msg.sender, token, amount);
        if (msg.value != 0) _depositNative(msg.sender);
    }

    function _depositToken(address account, address token, uint256 amount) private {
        uint256 before = IERC20(token).balanceOf(address(this));
        IERC20(token).safeTransferFrom(msg.sender, address(this), amount);
        uint256 received = IERC20(token).balanceOf(address(this)) - before;
        _credit(account, token, _index(token), received);
        emit Deposited(account, token, received);
    }

    function _depositNative(address account) private {
        _credit(account, NATIVE, 0, msg.value);
        emit Deposited(account, NATIVE, msg.value);
    }

    // ---- settlement ----

    function isSettled(uint64 tradeKey) external view returns (bool) {
        return settledWords[tradeKey >> 8] & (uint256(1) << (tradeKey & 255)) != 0;
    }

    function isWithdrawn(uint64 key) external view returns (bool) {
        return withdrawnWords[key >> 8] & (uint256(1) << (key & 255)) != 0;
    }

    /**
     * Applies one batch: marks every trade key settled and applies the netted deltas, all or none.
     *
     * `keyRuns`: runs of consecutive trade keys, 12 bytes each (uint64 first key, uint32 count,
     * big-endian): Keel numbers trades in sequence and batches them in that order, so a batch is
     * mostly one run, marked a bitmap word (256 keys) at a time.
     *
     * `deltas`: per balance slot (a pair of tokens at indices 2k and 2k+1), slots strictly
     * ascending: the slot's two tokens (20 bytes each: the token at 2k, the token at 2k+1 or the
     * zero address while index 2k+1 has none; the contract checks both against its indices, so a
     * reorg that gave an index to another token cannot move the wrong token), a count (uint16),
     * then that many records of (account 20 bytes, the change of the 2k balance, the change of the
     * 2k+1 balance), each change 16 bytes big-endian in sign-magnitude form (top bit set: a debit).
     * One record per account and slot (netted per batch), so each account's slot is read and
     * written once. Per token the changes may sum to at most zero; what is left over is the fee
     * credited to the fee recipient.
     */
    function settle(bytes16 batchId, bytes calldata keyRuns, bytes calldata deltas) external onlyOperator nonReentrant {
        uint256 count = _markSettled(keyRuns);
        address fees = feeRecipient;
        uint256 p = 0;
        uint256 end = deltas.length;
        uint256 nextSlot = 0;
        while (p < end) {
            if (p + 42 > end) revert BadDeltas();
            uint256 slot = _slotOf(address(uint160(_word(deltas, p) >> 96)), address(uint160(_word(deltas, p + 20) >> 96)));
            uint256 n = _word(deltas, p + 40) >> 240;
            if (slot < nextSlot) revert UnsortedDeltas(p);
            nextSlot = slot + 1;
            p += 42;
            if (p + n * 52 > end) revert BadDeltas();
            p = _applySlot(deltas, p, n, slot, fees);
        }
        emit BatchSettled(batchId, count, keccak256(keyRuns));
    }

    /// Applies a slot's `n` records starting at `p` and credits the slot's fees; where the next group starts.
    function _applySlot(bytes calldata deltas, uint256 p, uint256 n, uint256 slot, address fees) private returns (uint256) {
        int256 sumLow = 0;
        int256 sumHigh = 0;
        for (uint256 i = 0; i < n; i++) {
            (int256 lowChange, int256 highChange) = _applyRecord(deltas, p, slot);
            p += 52;
            sumLow += lowChange;
            sumHigh += highChange;
        }
        if (sumLow > 0) revert ValueCreated(tokenAt(slot << 1));
        if (sumHigh > 0) revert ValueCreated(tokenAt((slot << 1) | 1));
        if (sumLow < 0 || sumHigh < 0) {
            uint256 word = balanceSlots[fees][slot];
            uint256 lowBalance = _added(fees, slot << 1, word & type(uint128).max, uint256(-sumLow));
            uint256 highBalance = _added(fees, (slot << 1) | 1, word >> 128, uint256(-sumHigh));
            balanceSlots[fees][slot] = lowBalance | (highBalance << 128);
        }
        return p;
    }

    /// Applies the record at `p` (account, change of the slot's low token, change of its high token) to the account's slot, read and written once; the two changes.
    function _applyRecord(bytes calldata deltas, uint256 p, uint256 slot) private returns (int256 lowChange, int256 highChange) {
        // Read here rather than through _word: this runs once per account and slot of every batch.
        address account;
        uint256 low;
        uint256 high;
        assembly {
            let at := add(deltas.offset, p)
            account := shr(96, calldataload(at))
            low := shr(128, calldataload(add(at, 20)))
            high := shr(128, calldataload(add(at, 36)))
        }
        uint256 word = balanceSlots[account][slot];
        uint256 lowBalance;
        uint256 highBalance;
        (lowBalance, lowChange) = _applyChange(account, slot << 1, word & type(uint128).max, low);
        (highBalance, highChange) = _applyChange(account, (slot << 1) | 1, word >> 128, high);
        balanceSlots[account][slot] = lowBalance | (highBalance << 128);
    }

    /// The 32 bytes of `data` from `offset` (zero past its end, as calldata reads); callers check the length first.
    function _word(bytes calldata data, uint256 offset) private pure returns (uint256 w) {
        assembly {
            w := calldataload(add(data.offset, offset))
        }
    }

    /// The balance slot of a pair of tokens named in a batch: `low` must hold an even index and `high` the next (or be the zero address while no token has it).
    function _slotOf(address low, address high) private view returns (uint256) {
        uint256 index = low == NATIVE ? 0 : tokenIndex[low];
        if ((index == 0 && low != NATIVE) || index & 1 != 0) revert WrongTokenPair(low, high);
        if (high == NATIVE ? tokens.length > index : tokenIndex[high] != index + 1) revert WrongTokenPair(low, high);
        return index >> 1;
    }

    /// A 128-bit balance of token `index` after a sign-magnitude change (top bit of 128: a debit); the change as a signed number.
    function _applyChange(address account, uint256 index, uint256 balance, uint256 change) private view returns (uint256, int256) {
        uint256 magnitude = change & (type(uint128).max >> 1);
        if (change == magnitude) return (_added(account, index, balance, magnitude), int256(magnitude));
        if (balance < magnitude) revert InsufficientBalance(account, tokenAt(index), balance, magnitude);
        unchecked {
            return (balance - magnitude, -int256(magnitude));
        }
    }

    /// A 128-bit balance of token `index` plus `amount` (reverts past 128 bits).
    function _added(address account, uint256 index, uint256 balance, uint256 amount) private view returns (uint256) {
        balance += amount;
        if (balance > type(uint128).max) revert BalanceOverflow(account, tokenAt(index));
        return balance;
    }

    /// The token at `index` (the native coin at 0; address(0) too for an index no token has yet).
    function tokenAt(uint256 index) public view returns (address) {
        return index == 0 || index > tokens.length ? NATIVE : tokens[index - 1];
    }

    /// Marks the runs' keys in the bitmap (a word at a time); reverts if any was settled before. The number of keys.
    function _markSettled(bytes calldata runs) private returns (uint256 count) {
        if (runs.length == 0 || runs.length % 12 != 0) revert BadTradeKeys();
        for (uint256 p = 0; p < runs.length; p += 12) {
            uint256 first;
            uint256 n;
            assembly {
                let run := calldataload(add(runs.offset, p))
                first := shr(192, run)
                n := and(shr(160, run), 0xffffffff)
            }
            if (n == 0) revert BadTradeKeys();
            count += n;
            uint256 last = first + n - 1;
            if (last > type(uint64).max) revert BadTradeKeys();
            while (true) {
                uint256 index = first >> 8;
                uint256 hi = (last >> 8) == index ? last & 255 : 255;
                uint256 mask = (type(uint256).max >> (255 - hi)) & (type(uint256).max << (first & 255));
                uint256 word = settledWords[index];
                if (word & mask != 0) revert TradeAlreadySettled(uint64(_lowestKey(index, word & mask)));
                settledWords[index] = word | mask;
                if (hi != 255 || (index << 8) + 255 >= last) break;
                first = (index + 1) << 8;
            }
        }
    }

    /// The lowest key of a bitmap word's set bits (only ever read on the way to a revert).
    function _lowestKey(uint256 index, uint256 bits) private pure returns (uint256) {
        uint256 bit = 0;
        while (bits & (uint256(1) << bit) == 0) bit++;
        return (index << 8) + bit;
    }

    // ---- funds out: only with their owner's consent ----

    /**
     * Pays out withdrawals the accounts signed (EIP-712 `Withdrawal`), each key once. Operator only:
     * Keel takes the amount from the account's trading balance in its ledger before it submits, so
     * nothing locked in open orders or owed to a batch can leave. All or none.
     */
    function withdraw(Withdrawal[] calldata ws, bytes[] calldata signatures) external onlyOperator nonReentrant {
        if (ws.length != signatures.length) revert LengthMismatch();
        for (uint256 i = 0; i < ws.length; i++) {
            Withdrawal calldata w = ws[i];
            uint256 word = withdrawnWords[w.key >> 8];
            uint256 bit = uint256(1) << (w.key & 255);
            if (word & bit != 0) revert AlreadyWithdrawn(w.key);
            bytes32 digest = _hashTypedDataV4(keccak256(abi.encode(WITHDRAWAL_TYPEHASH, w.key, w.account, w.token, w.amount, w.to)));
            if (ECDSA.recover(digest, signatures[i]) != w.account) revert NotSignedByAccount(w.key);
            withdrawnWords[w.key >> 8] = word | bit;
            _debit(w.account, w.token, _index(w.token), w.amount);
            _send(w.to, w.token, w.amount);
            emit Withdrawn(w.key, w.account, w.token, w.amount, w.to);
        }
    }

    /// The fee recipient takes the fees collected in a token.
    function claimFees(address token) external nonReentrant {
        _payOut(feeRecipient, token, balanceOf(token, feeRecipient));
    }

    /// Escape hatch, step 1: an account asks to leave without the operator.
    function requestExit() external {
        exitRequestedAt[msg.sender] = block.timestamp;
        emit ExitRequested(msg.sender, block.timestamp + exitDelay);
    }

    /// Escape hatch, step 2: `exitDelay` after its request, an account withdraws a balance itself.
    function exit(address token) external nonReentrant {
        uint256 requested = exitRequestedAt[msg.sender];
        if (requested == 0 || block.timestamp < requested + exitDelay) revert ExitNotReady(requested == 0 ? type(uint256).max : requested + exitDelay);
        _payOut(msg.sender, token, balanceOf(token, msg.sender));
    }

    /// An account's (or the fee recipient's) whole balance of a token, to itself.
    function _payOut(address account, address token, uint256 amount) private {
        if (amount == 0) return;
        _debit(account, token, _index(token), amount);
        _send(account, token, amount);
        emit Released(account, token, amount);
    }

    /// What `account` holds here of `token`.
    function balanceOf(address token, address account) public view returns (uint256) {
        uint256 index = token == NATIVE ? 0 : tokenIndex[token];
        if (index == 0 && token != NATIVE) return 0;
        return (balanceSlots[account][index >> 1] >> ((index & 1) * 128)) & type(uint128).max;
    }

    /// The token's index, given the next one if it has none yet.
    function _index(address token) private returns (uint256 index) {
        if (token == NATIVE) return 0;
        index = tokenIndex[token];
        if (index == 0) {
            tokens.push(token);
            index = tokens.length;
            tokenIndex[token] = index;
        }
    }

    function _credit(address account, address token, uint256 index, uint256 amount) private {
        uint256 shift = (index & 1) * 128;
        uint256 slot = balanceSlots[account][index >> 1];
        uint256 balance = ((slot >> shift) & type(uint128).max) + amount;
        if (balance > type(uint128).max) revert BalanceOverflow(account, token);
        balanceSlots[account][index >> 1] = (slot & ~(uint256(type(uint128).max) << shift)) | (balance << shift);
    }

    function _debit(address account, address token, uint256 index, uint256 amount) private {
        uint256 shift = (index & 1) * 128;
        uint256 slot = balanceSlots[account][index >> 1];
        uint256 balance = (slot >> shift) & type(uint128).max;
        if (balance < amount) revert InsufficientBalance(account, token, balance, amount);
        balanceSlots[account][index >> 1] = (slot & ~(uint256(type(uint128).max) << shift)) | ((balance - amount) << shift);
    }

    function _send(address to, address token, uint256 amount) private {
        if (token == NATIVE) {
            (bool ok, ) = to.call{value: amount}("");
            if (!ok) revert NativeTransferFailed();
        } else {
            IERC20(token).safeTransfer(to, amount);
        }
    }
}
