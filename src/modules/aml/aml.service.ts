import { KeelError } from '../../platform/errors';
import type { SanctionMatch, SanctionsScreen } from './sanctions-screen';

/** The spec's AML batch: 1 to 50 addresses. */
export const AML_BATCH_MAX = 50;
/** Longer than any chain's address format; longer input is refused rather than screened. */
const ADDRESS_MAX_LENGTH = 128;
const OFAC_SEARCH_URL = 'https://sanctionssearch.ofac.treas.gov/';

/** One list entry an address matched, in the spec's identification shape plus the raw match. */
export interface AmlIdentificationView {
  category: string;
  name: string;
  description: string;
  url: string;
  /** The list the entry is on (ETH, XBT, USDT, …). */
  list: string;
  /** The entry as the list writes it (EVM entries may differ in case from the address asked about). */
  listedAddress: string;
}

/** The spec's AML check result. */
export interface AmlResultView {
  address: string;
  isSanctioned: boolean;
  identifications: AmlIdentificationView[];
}

/** The lists in use: where they came from and their date. */
export interface SanctionsListsView {
  source: string;
  listDate: string | null;
  activeSince: Date;
  addressCount: number;
  lists: { name: string; entries: number }[];
}

export interface AmlBatchView {
  data: AmlResultView[];
  totalChecked: number;
  /** The lists the addresses were screened against. */
  screenedAgainst: SanctionsListsView;
}

export function identification(m: SanctionMatch, listDate: string | null): AmlIdentificationView {
  return {
    category: 'SANCTIONS',
    name: `OFAC SDN digital currency address (${m.list})`,
    description: `${m.address} is listed under ${m.list} in the U.S. Treasury OFAC SDN list${listDate ? ` of ${listDate}` : ''}`,
    url: OFAC_SEARCH_URL,
    list: m.list,
    listedAddress: m.address,
  };
}

/** AML screening for API callers: the batch check and what is screened against. */
export class AmlService {
  constructor(private readonly screen: SanctionsScreen) {}

  /** Each address screened on its own, in the order given (the spec: one address at a time). */
  checkBatch(addresses: string[]): AmlBatchView {
    if (addresses.length < 1 || addresses.length > AML_BATCH_MAX) {
      throw KeelError.validation([{ field: 'addresses', error: `must have 1 to ${AML_BATCH_MAX} elements (got ${addresses.length})` }]);
    }
    addresses.forEach((a, i) => {
      if (!a.trim() || a.length > ADDRESS_MAX_LENGTH) throw KeelError.validation([{ field: `addresses[${i}]`, error: `must be an address of 1 to ${ADDRESS_MAX_LENGTH} characters` }]);
    });
    const info = this.lists();
    const data = addresses.map((address) => {
      const r = this.screen.screen(address);
      return { address, isSanctioned: r.sanctioned, identifications: r.matches.map((m) => identification(m, info.listDate)) };
    });
    return { data, totalChecked: data.length, screenedAgainst: info };
  }

  lists(): SanctionsListsView {
    return this.screen.info();
  }
}
