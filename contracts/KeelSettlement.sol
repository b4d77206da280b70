// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {ReentrancyGuard} from "@openzeppelin/contracts/utils/ReentrancyGuard.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";

/**
 * @notice Keel's settlement contract: a custody vault of per-account balances that the operator
 * settles off-chain matched trades against, in batches, netted per account and asset.
 *
 * Rules the contract enforces (whatever the operator sends):
 * - only the operator may settle or release, and a batch applies all of its deltas or none;
 * - a trade key settles at most once (a bitmap of settled keys; a replayed batch reverts);
 * - per asset a batch cannot create value: what accounts receive is at most what accounts pay,
 *   and the difference (the trading fees) is credited to the fee recipient;
 * - no balance goes below zero;
 * - funds only ever leave to the account that owns them (release by the operator, or the
 *   account's own exit after `exitDelay` if the operator stops), or to the fee recipient.
 *
 * Asset address(0) is the chain's native coin.
 */
contract KeelSettlement is ReentrancyGuard, Ownable {
    using SafeERC20 for IERC20;

    address public constant NATIVE = address(0);

    struct Delta {
        address account;
        address token;
        int256 amount;
    }

    address public operator;
    address public feeRecipient;
    /// Seconds between an account's exit request and its own withdrawal.
    uint256 public immutable exitDelay;

    /// token => account => amount held here for the account.
    mapping(address => mapping(address => uint256)) public balanceOf;
    /// trade key >> 8 => bitmap of settled keys.
    mapping(uint256 => uint256) private settledWords;
    mapping(address => uint256) public exitRequestedAt;

    event Deposited(address indexed account, address indexed token, uint256 amount);
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

    modifier onlyOperator() {
        if (msg.sender != operator) revert NotOperator();
        _;
    }

    constructor(address operator_, address feeRecipient_, uint256 exitDelay_) Ownable(msg.sender) {
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

    // ---- deposits: an account moves its own funds in ----

    function deposit(address token, uint256 amount) external nonReentrant {
        uint256 before = IERC20(token).balanceOf(address(this));
        IERC20(token).safeTransferFrom(msg.sender, address(this), amount);
        uint256 received = IERC20(token).balanceOf(address(this)) - before;
        balanceOf[token][msg.sender] += received;
        emit Deposited(msg.sender, token, received);
    }

    function depositNative() external payable {
        balanceOf[NATIVE][msg.sender] += msg.value;
        emit Deposited(msg.sender, NATIVE, msg.value);
    }

    // ---- settlement ----

    function isSettled(uint64 tradeKey) external view returns (bool) {
        return settledWords[tradeKey >> 8] & (uint256(1) << (tradeKey & 255)) != 0;
    }

    /**
     * Applies one batch: marks every trade key settled (8 bytes each, big-endian) and applies the
     * netted deltas. Deltas are grouped by token in ascending token order; per token the deltas may
     * sum to at most zero, and what is left over is the fee credited to the fee recipient.
     */
    function settle(bytes16 batchId, bytes calldata tradeKeys, Delta[] calldata deltas) external onlyOperator nonReentrant {
        uint256 count = tradeKeys.length / 8;
        if (count == 0 || tradeKeys.length % 8 != 0) revert BadTradeKeys();
        _markSettled(tradeKeys, count);

        address token = address(0);
        int256 sum = 0;
        for (uint256 i = 0; i < deltas.length; i++) {
            Delta calldata d = deltas[i];
            if (i == 0 || d.token != token) {
                if (i != 0) {
                    if (uint160(d.token) < uint160(token)) revert UnsortedDeltas(i);
                    _creditFee(token, sum);
                }
                token = d.token;
                sum = 0;
            }
            sum += d.amount;
            if (d.amount < 0) {
                uint256 need = uint256(-d.amount);
                uint256 bal = balanceOf[d.token][d.account];
                if (bal < need) revert InsufficientBalance(d.account, d.token, bal, need);
                unchecked {
                    balanceOf[d.token][d.account] = bal - need;
                }
            } else if (d.amount > 0) {
                balanceOf[d.token][d.account] += uint256(d.amount);
            }
        }
        if (deltas.length != 0) _creditFee(token, sum);
        emit BatchSettled(batchId, count, keccak256(tradeKeys));
    }

    function _markSettled(bytes calldata tradeKeys, uint256 count) private {
        uint256 wordIndex = type(uint256).max;
        uint256 word = 0;
        for (uint256 i = 0; i < count; i++) {
            uint64 key = uint64(bytes8(tradeKeys[i * 8:i * 8 + 8]));
            uint256 index = uint256(key) >> 8;
            if (index != wordIndex) {
                if (wordIndex != type(uint256).max) settledWords[wordIndex] = word;
                wordIndex = index;
                word = settledWords[index];
            }
            uint256 bit = uint256(1) << (key & 255);
            if (word & bit != 0) revert TradeAlreadySettled(key);
            word |= bit;
        }
        settledWords[wordIndex] = word;
    }

    function _creditFee(address token, int256 sum) private {
        if (sum > 0) revert ValueCreated(token);
        if (sum < 0) balanceOf[token][feeRecipient] += uint256(-sum);
    }

    // ---- funds out: only to their owner ----

    /// The operator returns accounts' whole balances of the given tokens to the accounts themselves.
    function release(address[] calldata accounts, address[] calldata tokens) external onlyOperator nonReentrant {
        for (uint256 i = 0; i < accounts.length; i++) _payOut(accounts[i], tokens[i], balanceOf[tokens[i]][accounts[i]]);
    }

    /// The fee recipient takes the fees collected in a token.
    function claimFees(address token) external nonReentrant {
        _payOut(feeRecipient, token, balanceOf[token][feeRecipient]);
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
        _payOut(msg.sender, token, balanceOf[token][msg.sender]);
    }

    function _payOut(address account, address token, uint256 amount) private {
        if (amount == 0) return;
        balanceOf[token][account] = 0;
        if (token == NATIVE) {
            (bool ok, ) = account.call{value: amount}("");
            if (!ok) revert NativeTransferFailed();
        } else {
            IERC20(token).safeTransfer(account, amount);
        }
        emit Released(account, token, amount);
    }
}
