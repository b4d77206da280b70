#!/usr/bin/env node
'use strict';
/**
 * Compiles every .sol file under contracts/ with the npm solc package (solc-js: nothing is
 * downloaded) and writes build/contracts/<ContractName>.json = { contractName, abi, bytecode }.
 * Skips the work when every output is newer than the sources, this script and the installed
 * compiler/OpenZeppelin. Prints one line; on compiler errors prints them and exits 1.
 */
const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const SRC_DIR = path.join(ROOT, 'contracts');
const OUT_DIR = path.join(ROOT, 'build', 'contracts');
const STAMP = path.join(OUT_DIR, '.build-info.json');
const EVM_VERSION = 'cancun';

function listSources(dir) {
  if (!fs.existsSync(dir)) return [];
  const found = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...listSources(full));
    else if (entry.isFile() && entry.name.endsWith('.sol')) found.push(full);
  }
  return found.sort();
}

/** Source unit names are project-relative with forward slashes, so metadata is machine-independent. */
const unitName = (file) => path.relative(ROOT, file).split(path.sep).join('/');

function packageVersion(name) {
  try {
    return JSON.parse(fs.readFileSync(require.resolve(`${name}/package.json`, { paths: [ROOT] }), 'utf8')).version;
  } catch {
    return 'none';
  }
}

function mtime(file) {
  try {
    return fs.statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
}

function upToDate(sources, fingerprint) {
  let stamp;
  try {
    stamp = JSON.parse(fs.readFileSync(STAMP, 'utf8'));
  } catch {
    return false;
  }
  if (JSON.stringify(stamp.fingerprint) !== JSON.stringify(fingerprint)) return false;
  const newestInput = Math.max(mtime(__filename) ?? Infinity, ...sources.map((s) => mtime(s) ?? Infinity));
  const outputs = (stamp.outputs ?? []).map((name) => path.join(OUT_DIR, `${name}.json`));
  if (outputs.length === 0) return false;
  const oldestOutput = Math.min(...outputs.map((o) => mtime(o) ?? -Infinity), mtime(STAMP) ?? -Infinity);
  return oldestOutput >= newestInput;
}

function findImports(importPath) {
  try {
    const local = path.resolve(ROOT, importPath);
    if (local.startsWith(ROOT + path.sep) && fs.existsSync(local)) return { contents: fs.readFileSync(local, 'utf8') };
    // Package imports such as @openzeppelin/contracts/...: resolved from the project's node_modules.
    return { contents: fs.readFileSync(require.resolve(importPath, { paths: [ROOT] }), 'utf8') };
  } catch {
    return { error: `File not found: ${importPath}` };
  }
}

function writeAtomic(file, text) {
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, text);
  fs.renameSync(tmp, file);
}

function main() {
  const started = Date.now();
  const sources = listSources(SRC_DIR);
  const fingerprint = {
    solc: packageVersion('solc'),
    openzeppelin: packageVersion('@openzeppelin/contracts'),
    evmVersion: EVM_VERSION,
    sources: sources.map(unitName),
  };
  if (sources.length === 0) {
    console.log('contracts: no .sol sources in contracts/, nothing to compile');
    return;
  }
  if (upToDate(sources, fingerprint)) {
    console.log(`contracts: up to date (${sources.length} source${sources.length === 1 ? '' : 's'})`);
    return;
  }

  const solc = require('solc');
  const input = {
    language: 'Solidity',
    sources: Object.fromEntries(sources.map((s) => [unitName(s), { content: fs.readFileSync(s, 'utf8') }])),
    settings: {
      optimizer: { enabled: true, runs: 200 },
      evmVersion: EVM_VERSION,
      outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
    },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input), { import: findImports }));
  const problems = output.errors ?? [];
  const errors = problems.filter((e) => e.severity === 'error');
  if (errors.length > 0) {
    for (const e of errors) console.error(e.formattedMessage ?? e.message);
    console.error(`contracts: compilation failed (${errors.length} error${errors.length === 1 ? '' : 's'})`);
    process.exit(1);
  }

  fs.mkdirSync(OUT_DIR, { recursive: true });
  const written = new Map();
  for (const source of sources.map(unitName)) {
    for (const [name, contract] of Object.entries(output.contracts?.[source] ?? {})) {
      if (written.has(name)) {
        console.error(`contracts: contract name ${name} is defined in both ${written.get(name)} and ${source}`);
        process.exit(1);
      }
      written.set(name, source);
      const artifact = { contractName: name, abi: contract.abi, bytecode: `0x${contract.evm.bytecode.object}` };
      writeAtomic(path.join(OUT_DIR, `${name}.json`), `${JSON.stringify(artifact, null, 2)}\n`);
    }
  }
  // Drop artifacts of contracts that no longer exist, so stale ABIs cannot be picked up.
  try {
    const previous = JSON.parse(fs.readFileSync(STAMP, 'utf8')).outputs ?? [];
    for (const name of previous) if (!written.has(name)) fs.rmSync(path.join(OUT_DIR, `${name}.json`), { force: true });
  } catch {
    // no previous build
  }
  writeAtomic(STAMP, `${JSON.stringify({ fingerprint, outputs: [...written.keys()].sort() }, null, 2)}\n`);

  const warnings = problems.length - errors.length;
  console.log(
    `contracts: compiled ${sources.length} source${sources.length === 1 ? '' : 's'} -> ${[...written.keys()].join(', ')}` +
      ` with solc ${solc.version().split('+')[0]} in ${((Date.now() - started) / 1000).toFixed(1)}s` +
      (warnings > 0 ? ` (${warnings} warning${warnings === 1 ? '' : 's'})` : ''),
  );
}

main();
