import { describe, expect, it } from 'vitest';
import { DEFAULT_PLAN, parsePlan } from '@/bench/peer/plan';
import { IMPLEMENTATIONS } from '@/bench/peer/peer-run';

const all = [...IMPLEMENTATIONS];

describe('parsePlan', () => {
  it('runs every allowed implementation at a size that names none', () => {
    expect(parsePlan('1000x3', all)).toEqual([{ apps: 1000, rounds: 3, implementations: all }]);
  });

  it('runs only the implementations named after @ at that size', () => {
    expect(parsePlan(DEFAULT_PLAN, all)).toEqual([
      { apps: 1000, rounds: 5, implementations: all },
      { apps: 5000, rounds: 3, implementations: ['refwatch', 'cr-watch', 'raw-watch'] },
    ]);
  });

  it('keeps to REFWATCH_PEER_IMPLS, and says so when a size is left with none', () => {
    expect(parsePlan('5000x2@refwatch+cr-watch', ['refwatch', 'raw-watch'])).toEqual([
      { apps: 5000, rounds: 2, implementations: ['refwatch'] },
    ]);
    expect(() => parsePlan('5000x2@cr-watch', ['refwatch'])).toThrow(
      'REFWATCH_PEER_PLAN: "5000x2@cr-watch" runs none of REFWATCH_PEER_IMPLS (refwatch): name one of them after @',
    );
  });

  it('names the field and the form for a bad size or implementation', () => {
    expect(() => parsePlan('6000x1', all)).toThrow(/^REFWATCH_PEER_PLAN: "6000x1" is not APPSxROUNDS\[@impl\+impl\]/);
    expect(() => parsePlan('1000x0', all)).toThrow(/at least 1 round/);
    expect(() => parsePlan('1000x1@cr-fast', all)).toThrow(
      /^REFWATCH_PEER_PLAN: unknown implementation "cr-fast"; choose from refwatch, cr-watch/,
    );
  });
});
