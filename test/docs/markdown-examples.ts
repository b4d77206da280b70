import { readFileSync } from 'node:fs';

/**
 * The runnable examples of a markdown document. A fenced block is an example when its info string
 * carries the word `keel-example`:
 *
 * - ```` ```sh keel-example ````: a shell fragment (curl, jq, `npx keel …`) run by bash;
 * - ```` ```graphql keel-example ```` with optional attributes `host=core|pro` (default core),
 *   `key=NAME` (the variable holding the API key to send; default ADMIN_KEY on core, PRO_KEY on pro)
 *   and `save=NAME:path.in.the.answer` (keeps a value of the answer for the examples after it); its
 *   variables are the ```` ```json keel-variables ```` block right after it, if there is one;
 * - ```` ```ts keel-example ````: a TypeScript program using the client (`@keel/client`, from
 *   `clients/typescript`), run by Node with the document's variables as its environment
 *   (`process.env.CORE`, …); a program that throws or exits non-zero fails.
 *
 * Any other block (```` ```sh ````, ```` ```js ````) is prose: shown, never run.
 */
export interface ShellExample {
  kind: 'sh';
  line: number;
  code: string;
}

export interface GraphqlExample {
  kind: 'graphql';
  line: number;
  code: string;
  attributes: Record<string, string>;
  variables?: string;
}

export interface TypeScriptExample {
  kind: 'ts';
  line: number;
  code: string;
}

export type Example = ShellExample | GraphqlExample | TypeScriptExample;

interface Fence {
  line: number;
  info: string[];
  code: string;
}

/** Every fenced block (``` or ~~~, not nested) with its first line's number, 1-based. */
export function fencedBlocks(markdown: string): Fence[] {
  const lines = markdown.split('\n');
  const fences: Fence[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^\s*(`{3,}|~{3,})(.*)$/.exec(lines[i]);
    // As in CommonMark, a backtick fence's info string holds no backtick: such a line is inline code.
    if (!open || (open[1][0] === '`' && open[2].includes('`'))) continue;
    const [, marker, info] = open;
    const body: string[] = [];
    let j = i + 1;
    while (j < lines.length && !lines[j].trimStart().startsWith(marker)) body.push(lines[j++]);
    fences.push({ line: i + 1, info: info.trim().split(/\s+/).filter(Boolean), code: body.join('\n') });
    i = j;
  }
  return fences;
}

function attributesOf(info: string[]): Record<string, string> {
  return Object.fromEntries(info.filter((word) => word.includes('=')).map((word) => [word.slice(0, word.indexOf('=')), word.slice(word.indexOf('=') + 1)]));
}

export function examplesIn(markdown: string): Example[] {
  const fences = fencedBlocks(markdown);
  const examples: Example[] = [];
  fences.forEach((fence, i) => {
    if (!fence.info.includes('keel-example')) return;
    const [language] = fence.info;
    if (language === 'sh' || language === 'bash') examples.push({ kind: 'sh', line: fence.line, code: fence.code });
    else if (language === 'ts' || language === 'typescript') examples.push({ kind: 'ts', line: fence.line, code: fence.code });
    else if (language === 'graphql') {
      const next = fences[i + 1];
      const variables = next && next.info[0] === 'json' && next.info.includes('keel-variables') ? next.code : undefined;
      examples.push({ kind: 'graphql', line: fence.line, code: fence.code, attributes: attributesOf(fence.info), variables });
    } else throw new Error(`line ${fence.line}: a keel-example must be sh, graphql or ts, not ${language ?? 'unlabelled'}`);
  });
  return examples;
}

export function examplesOfFile(path: string): Example[] {
  return examplesIn(readFileSync(path, 'utf8'));
}
