import fs from 'node:fs';
import path from 'node:path';
import type { ethers } from 'ethers';

export interface ContractArtifact {
  abi: ethers.InterfaceAbi;
  bytecode: string;
}

const cache = new Map<string, ContractArtifact>();

/**
 * build/contracts/<name>.json as scripts/compile-contracts.js writes it, found by walking up from
 * this file (works from src/ and dist/).
 */
export function loadArtifact(name: string): ContractArtifact {
  const cached = cache.get(name);
  if (cached) return cached;
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'build', 'contracts', `${name}.json`);
    if (fs.existsSync(candidate)) {
      const artifact = JSON.parse(fs.readFileSync(candidate, 'utf8')) as ContractArtifact;
      const found = { abi: artifact.abi, bytecode: artifact.bytecode };
      cache.set(name, found);
      return found;
    }
    if (path.dirname(dir) === dir) {
      throw new Error(`build/contracts/${name}.json not found: run \`node scripts/compile-contracts.js\` (part of \`npm run build\`)`);
    }
  }
}
