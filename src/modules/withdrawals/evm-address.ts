import { KeelError } from '../../platform/errors';
import { checksummed } from '../../platform/chain-port/evm-chain';

/** Checksummed; a mixed-case address with a bad checksum is refused (400 INVALID_ADDRESS naming `field`) rather than silently fixed. */
export function checksummedAddress(text: string, field: string): string {
  const address = checksummed(text);
  if (address === null) throw new KeelError('INVALID_ADDRESS', `${field} is not a valid EVM address (format or checksum)`, { fields: [{ field, error: 'INVALID_FIELD' }] });
  return address;
}
