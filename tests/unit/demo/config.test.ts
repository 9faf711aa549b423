import { describe, expect, it } from 'vitest';
import { RefwatchError } from '@/lib/model';
import { DEFAULT_TIMEOUT_MS, parseDemoConfig, parseReadyAfter } from '@/server/demo';

function fieldOf(input: unknown): { field: string | undefined; message: string } {
  try {
    parseDemoConfig(input);
  } catch (e) {
    expect(e).toBeInstanceOf(RefwatchError);
    return { field: (e as RefwatchError).field, message: (e as Error).message };
  }
  throw new Error('expected the config to be rejected');
}

describe('demo config', () => {
  it('fills in a bounded default run', () => {
    const c = parseDemoConfig({});
    expect(c).toMatchObject({
      apps: 100,
      databases: 100,
      caches: 100,
      secrets: 100,
      readyAfter: { distribution: 'uniform', minMs: 1000, maxMs: 20000 },
      dangling: { typo: 0, wrongNamespace: 0, kindNotInstalled: 0 },
      backoffPreset: 'client-go',
      timeoutMs: DEFAULT_TIMEOUT_MS,
    });
    expect(c.churn).toBeUndefined();
  });

  it('defaults each referent count to the number of Apps, and keeps explicit ones', () => {
    expect(parseDemoConfig({ apps: 40, caches: 4 })).toMatchObject({ apps: 40, databases: 40, caches: 4, secrets: 40 });
  });

  it('accepts a fixed delay, churn and the crossplane preset', () => {
    const c = parseDemoConfig({
      readyAfter: { distribution: 'fixed', ms: 500 },
      churn: { dropKind: 'Cache', afterMs: 3000 },
      backoffPreset: 'crossplane',
    });
    expect(c.readyAfter).toEqual({ distribution: 'fixed', ms: 500 });
    expect(c.churn).toEqual({ dropKind: 'Cache', afterMs: 3000 });
    expect(c.backoffPreset).toBe('crossplane');
  });

  it.each([
    [{ apps: 0 }, 'apps', /at least 1/],
    [{ apps: 5001 }, 'apps', /at most 5000/],
    [{ apps: 2.5 }, 'apps', /whole number/],
    [{ apps: '10' }, 'apps', /whole number/],
    [{ databases: 6000 }, 'databases', /at most 5000/],
    [{ readyAfter: { distribution: 'uniform', minMs: 5000, maxMs: 1000 } }, 'readyAfter.maxMs', /at least minMs/],
    [{ readyAfter: { distribution: 'normal' } }, 'readyAfter.distribution', /uniform.*fixed/],
    [{ readyAfter: { distribution: 'fixed', ms: -1 } }, 'readyAfter.ms', /negative/],
    [{ dangling: { typo: 1.5 } }, 'dangling.typo', /fraction/],
    [{ dangling: { typo: 0.6, wrongNamespace: 0.6 } }, 'dangling.typo', /add up to at most 1/],
    [{ churn: { dropKind: 'Database', afterMs: 10 } }, 'churn.dropKind', /Cache/],
    [{ backoffPreset: 'controller-runtime' }, 'backoffPreset', /client-go.*crossplane/],
    [{ timeoutMs: 3_600_000 }, 'timeoutMs', /10 minutes/],
    [{ timeoutMs: 10 }, 'timeoutMs', /at least 1000/],
    [{ colour: 'blue' }, 'colour', /unknown field/],
    [{ dangling: { typos: 0.1 } }, 'dangling.typos', /unknown field/],
  ])('rejects %j naming %s', (input, field, message) => {
    const e = fieldOf(input);
    expect(e.field).toBe(field);
    expect(e.message).toMatch(message);
    expect(e.message.startsWith(`${field}:`)).toBe(true);
  });

  it('reads --ready-after as a uniform range or a fixed delay', () => {
    expect(parseReadyAfter('1s..20s')).toEqual({ distribution: 'uniform', minMs: 1000, maxMs: 20000 });
    expect(parseReadyAfter('200ms..1.5s')).toEqual({ distribution: 'uniform', minMs: 200, maxMs: 1500 });
    expect(parseReadyAfter('5s')).toEqual({ distribution: 'fixed', ms: 5000 });
    expect(() => parseReadyAfter('20s..1s')).toThrow(/maximum is below the minimum/);
    expect(() => parseReadyAfter('soon')).toThrow(/--ready-after "soon" is not a duration/);
    expect(() => parseReadyAfter('1s..2s..3s')).toThrow(/MIN..MAX/);
  });
});
