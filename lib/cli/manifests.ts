import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { isRecord } from '../rules/field-path';
import type { KubeObject } from '../model';
import { CliError } from './errors';

/** Manifest is one object of a change set and where it was read: file, and document index from 1. */
export interface Manifest {
  file: string;
  document: number;
  object: KubeObject;
}

const MANIFEST_FILE = /\.(ya?ml|json)$/i;

/**
 * readManifests reads -f arguments as kubectl does: files, directories (their
 * .yaml, .yml and .json files, sorted; subdirectories with recursive) and
 * `-` for stdin; every YAML document (or a JSON List's items) that is an
 * object with apiVersion, kind and metadata.name. A file that cannot be
 * read or parsed is a usage error naming it.
 */
export async function readManifests(
  args: readonly string[],
  opts: { recursive: boolean; stdin?: () => Promise<string> },
): Promise<Manifest[]> {
  const out: Manifest[] = [];
  for (const arg of args) {
    if (arg === '-') {
      const text = await (opts.stdin ?? readStdin)();
      out.push(...parse(text, '-'));
      continue;
    }
    for (const file of await filesOf(arg, opts.recursive, true)) {
      let text: string;
      try {
        text = await readFile(file, 'utf8');
      } catch (e) {
        throw new CliError(`flag -f: cannot read ${file}: ${(e as Error).message}`);
      }
      out.push(...parse(text, file));
    }
  }
  return out;
}

async function filesOf(p: string, recursive: boolean, top: boolean): Promise<string[]> {
  let s;
  try {
    s = await stat(p);
  } catch {
    throw new CliError(`flag -f: ${p} does not exist; give a file, a directory, or - for stdin`);
  }
  if (!s.isDirectory()) return [p];
  if (!top && !recursive) return [];
  const entries = (await readdir(p, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1));
  const files: string[] = [];
  for (const e of entries) {
    const child = path.join(p, e.name);
    if (e.isDirectory()) files.push(...(await filesOf(child, recursive, false)));
    else if (MANIFEST_FILE.test(e.name)) files.push(child);
  }
  return files;
}

function parse(text: string, file: string): Manifest[] {
  const out: Manifest[] = [];
  const docs = parseAllDocuments(text);
  const list = Array.isArray(docs) ? docs : [docs];
  list.forEach((doc, i) => {
    if (doc.errors.length > 0)
      throw new CliError(
        `flag -f: ${file} document ${i + 1} is not valid YAML: ${doc.errors[0]!.message.split('\n')[0]}`,
      );
    const value: unknown = doc.toJS();
    const items =
      isRecord(value) && Array.isArray(value.items) && /List$/.test(String(value.kind)) ? value.items : [value];
    for (const item of items) {
      if (!isRecord(item)) continue;
      if (typeof item.apiVersion !== 'string' || typeof item.kind !== 'string') continue;
      const meta = isRecord(item.metadata) ? item.metadata : undefined;
      if (!meta || typeof meta.name !== 'string' || meta.name === '') continue;
      out.push({ file, document: i + 1, object: item as KubeObject });
    }
  });
  return out;
}

function readStdin(): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    process.stdin.on('data', (c: Buffer) => chunks.push(c));
    process.stdin.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    process.stdin.on('error', reject);
  });
}
