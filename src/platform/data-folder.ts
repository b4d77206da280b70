import fs from 'node:fs';
import path from 'node:path';

/**
 * A value this deployment keeps in a file of its data folder: read when the file exists, otherwise
 * made once and written (exclusively, so when two processes race, both use the one written first).
 */
export function keptInDataFolder(dataDir: string, name: string, make: () => string, mode: number): { file: string; value: string; created: boolean } {
  const file = path.resolve(dataDir, name);
  if (fs.existsSync(file)) return { file, value: fs.readFileSync(file, 'utf8').trim(), created: false };
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const value = make();
  try {
    fs.writeFileSync(file, `${value}\n`, { mode, flag: 'wx' });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return { file, value: fs.readFileSync(file, 'utf8').trim(), created: false };
    throw e;
  }
  return { file, value, created: true };
}
