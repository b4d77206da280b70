import { ethers } from 'ethers';
import { KeelError } from '../../platform/errors';

/** Checksummed; a mixed-case address with a bad checksum is refused (400 INVALID_ADDRESS naming `field`) rather than silently fixed. */
export function checksummedAddress(text: string, field: string): string {
  try {
    if (!/^0x[0-9a-fA-F]{40}$/.test(text)) throw new Error('format');
    return ethers.getAddress(text);
  } catch {
    throw new KeelError('INVALID_ADDRESS', `${field} is not a valid EVM address (format or checksum)`, { fields: [{ field, error: 'INVALID_FIELD' }] });
  }
}
