import { readFile } from 'node:fs/promises';
import { err, type Result } from '../model';
import { RulesError, parseRulesText } from './parse';
import type { RulesDocument } from './schema';

/** loadRulesFile reads and validates a YAML or JSON rules file. It never throws: an unreadable file is a RulesError too. */
export async function loadRulesFile(path: string): Promise<Result<RulesDocument, RulesError>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    const reason =
      (e as NodeJS.ErrnoException).code === 'ENOENT'
        ? 'no such file; check the path'
        : `cannot read the file: ${(e as Error).message}`;
    return err(new RulesError([{ file: path, path: '', reason }]));
  }
  return parseRulesText(text, path);
}
