import { z } from 'zod';
import type { RefwatchError } from '../../lib/model';

/**
 * HistoryConfig says where transitions are kept: nowhere (`--history off`),
 * a SQLite file (the default: one per cluster identity under
 * $XDG_STATE_HOME/refwatch, unless a path is given), or PostgreSQL.
 */
export type HistoryConfig =
  | { mode: 'off' }
  | { mode: 'sqlite'; path?: string; retentionMs: number; maxBytes: number }
  | { mode: 'postgres'; url: string; retentionMs: number; maxBytes: number };

export const HISTORY_SETTINGS = {
  history: {
    env: 'REFWATCH_HISTORY',
    flag: '--history',
    accepts:
      'on (SQLite under $XDG_STATE_HOME/refwatch, the default), off, a SQLite file path, or a postgres:// URL (or set REFWATCH_HISTORY_URL)',
  },
  historyRetention: {
    env: 'REFWATCH_HISTORY_RETENTION',
    flag: '--history-retention',
    accepts: 'a duration such as 14d, 36h or 90m (default 14d)',
  },
  historyMaxSize: {
    env: 'REFWATCH_HISTORY_MAX_SIZE',
    flag: '--history-max-size',
    accepts: 'a size such as 1GiB, 500MiB or 2GB (SQLite; default 1GiB)',
  },
} as const;

export const historyEnvShape = {
  REFWATCH_HISTORY: z.string().optional(),
  REFWATCH_HISTORY_URL: z.string().optional(),
  REFWATCH_HISTORY_RETENTION: z.string().default('14d'),
  REFWATCH_HISTORY_MAX_SIZE: z.string().default('1GiB'),
};

const UNIT_MS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000 };
const UNIT_BYTES: Record<string, number> = {
  B: 1,
  KB: 1e3,
  MB: 1e6,
  GB: 1e9,
  TB: 1e12,
  KiB: 2 ** 10,
  MiB: 2 ** 20,
  GiB: 2 ** 30,
  TiB: 2 ** 40,
};

/** parseRetention reads 14d, 36h or 90m; a retention under a minute would prune what was just written. */
export function parseRetention(text: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)(m|h|d)$/.exec(text.trim());
  return m ? Math.round(Number(m[1]) * UNIT_MS[m[2]!]!) : undefined;
}

/** parseSize reads 1GiB, 500MiB, 2GB or bare bytes. */
export function parseSize(text: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)?$/.exec(text.trim());
  return m ? Math.round(Number(m[1]) * UNIT_BYTES[m[2] ?? 'B']!) : undefined;
}

export const historyEnvSchema = z.object(historyEnvShape);
type Env = z.infer<typeof historyEnvSchema>;

/** parseHistoryConfig reads the history settings; errors name the variable, its flag and what it accepts. */
export function parseHistoryConfig(
  e: Env,
  configError: (env: string, message: string) => RefwatchError,
): HistoryConfig {
  const given = e.REFWATCH_HISTORY;
  const url = e.REFWATCH_HISTORY_URL;
  if (given === 'off') return { mode: 'off' };
  const retentionMs = parseRetention(e.REFWATCH_HISTORY_RETENTION);
  if (retentionMs === undefined || retentionMs < 60_000)
    throw configError(
      'REFWATCH_HISTORY_RETENTION',
      `"${e.REFWATCH_HISTORY_RETENTION}" is not a retention of a minute or more`,
    );
  const maxBytes = parseSize(e.REFWATCH_HISTORY_MAX_SIZE);
  if (maxBytes === undefined || maxBytes < 2 ** 20)
    throw configError('REFWATCH_HISTORY_MAX_SIZE', `"${e.REFWATCH_HISTORY_MAX_SIZE}" is not a size of 1MiB or more`);
  const limits = { retentionMs, maxBytes };
  const postgres = (u: string) => /^postgres(ql)?:\/\//.test(u);
  if (url !== undefined) {
    if (!postgres(url))
      throw configError(
        'REFWATCH_HISTORY',
        'REFWATCH_HISTORY_URL is not a postgres:// URL; give postgres://user:password@host:5432/database',
      );
    if (given !== undefined && given !== 'on' && given !== url)
      throw configError(
        'REFWATCH_HISTORY',
        `"${postgres(given) ? 'a postgres:// URL' : given}" contradicts REFWATCH_HISTORY_URL; set one of them`,
      );
    return { mode: 'postgres', url, ...limits };
  }
  if (given === undefined || given === 'on') return { mode: 'sqlite', ...limits };
  if (postgres(given)) return { mode: 'postgres', url: given, ...limits };
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(given))
    throw configError('REFWATCH_HISTORY', `"${given.split('://')[0]}://" is not a database refwatch knows`);
  return { mode: 'sqlite', path: given, ...limits };
}
