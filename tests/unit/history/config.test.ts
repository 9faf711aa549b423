import { describe, expect, it } from 'vitest';
import { parseConfig } from '@/server/config';
import { clusterIdentity, historyTarget } from '@/server/history';

describe('history configuration', () => {
  it('is SQLite by default, one file per cluster under $XDG_STATE_HOME/refwatch, 14 days and 1 GiB', () => {
    const c = parseConfig({});
    expect(c.history).toEqual({ mode: 'sqlite', retentionMs: 14 * 86_400_000, maxBytes: 2 ** 30 });
    if (c.history?.mode !== 'sqlite') throw new Error('not sqlite');
    const embedded = historyTarget(c.history, clusterIdentity(true, 'http://127.0.0.1:1234'), { XDG_STATE_HOME: '/s' });
    expect(embedded).toEqual({ dialect: 'sqlite', path: '/s/refwatch/history-embedded.db' });
    const real = historyTarget(c.history, clusterIdentity(false, 'https://10.0.0.1:6443'), { HOME: '/home/u' });
    expect(real.dialect === 'sqlite' && real.path).toMatch(
      /^\/home\/u\/\.local\/state\/refwatch\/history-10\.0\.0\.1-6443-[0-9a-f]{8}\.db$/,
    );
    expect(clusterIdentity(false, 'https://a:6443')).not.toBe(clusterIdentity(false, 'https://b:6443'));
  });

  it('reads off, a path, a postgres:// URL from --history or REFWATCH_HISTORY_URL, and the limits', () => {
    expect(parseConfig({ REFWATCH_HISTORY: 'off' }).history).toEqual({ mode: 'off' });
    expect(parseConfig({ REFWATCH_HISTORY: '/data/h.db' }).history).toMatchObject({
      mode: 'sqlite',
      path: '/data/h.db',
    });
    expect(parseConfig({ REFWATCH_HISTORY: 'postgres://u:p@db/refwatch' }).history).toMatchObject({
      mode: 'postgres',
      url: 'postgres://u:p@db/refwatch',
    });
    expect(
      parseConfig({
        REFWATCH_HISTORY_URL: 'postgresql://db/r',
        REFWATCH_HISTORY_RETENTION: '36h',
        REFWATCH_HISTORY_MAX_SIZE: '500MiB',
      }).history,
    ).toEqual({ mode: 'postgres', url: 'postgresql://db/r', retentionMs: 36 * 3_600_000, maxBytes: 500 * 2 ** 20 });
  });

  it('names the variable, the flag and what it accepts on bad input', () => {
    expect(() => parseConfig({ REFWATCH_HISTORY_RETENTION: '2 weeks' })).toThrow(
      /REFWATCH_HISTORY_RETENTION \(flag --history-retention\): "2 weeks" is not a retention of a minute or more; accepted: a duration such as 14d/,
    );
    expect(() => parseConfig({ REFWATCH_HISTORY_MAX_SIZE: '1 lot' })).toThrow(
      /REFWATCH_HISTORY_MAX_SIZE \(flag --history-max-size\): "1 lot" is not a size of 1MiB or more; accepted: a size such as 1GiB/,
    );
    expect(() => parseConfig({ REFWATCH_HISTORY: 'mysql://db/x' })).toThrow(
      /REFWATCH_HISTORY \(flag --history\): "mysql:\/\/" is not a database refwatch knows/,
    );
    expect(() => parseConfig({ REFWATCH_HISTORY_URL: 'http://x' })).toThrow(
      /REFWATCH_HISTORY_URL is not a postgres:\/\/ URL/,
    );
    expect(() => parseConfig({ REFWATCH_HISTORY: '/a.db', REFWATCH_HISTORY_URL: 'postgres://db/x' })).toThrow(
      /"\/a\.db" contradicts REFWATCH_HISTORY_URL; set one of them/,
    );
  });
});
