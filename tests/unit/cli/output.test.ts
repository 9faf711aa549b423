import pc from 'picocolors';
import { describe, expect, it } from 'vitest';
import { printExplanation, resolved } from '@/lib/cli/commands/explain';
import { printStuck } from '@/lib/cli/commands/stuck';
import { age, renderData, renderTable, useColor, type Printer } from '@/lib/cli/output';
import type { Explanation } from '@/lib/diagnose';

function printer(
  format: Printer['format'],
  opts: { noHeaders?: boolean; color?: boolean } = {},
): Printer & { out: string[] } {
  const out: string[] = [];
  return {
    format,
    noHeaders: opts.noHeaders ?? false,
    colors: pc.createColors(opts.color ?? false),
    write: (t) => out.push(t),
    out,
  };
}

const EXPLANATION: Explanation = {
  object: 'Pod/shop/api',
  controllers: [
    {
      controller: 'rules/Pod',
      state: 'NotFound',
      since: 1_000,
      reason: 'NotFound: ConfigMap/shop/web-confg',
      references: [
        {
          referent: 'ConfigMap/shop/web-confg',
          fieldPath: 'spec.volumes[0].configMap.name',
          state: 'NotFound',
          reason: 'NotFound',
          message: 'ConfigMap/shop/web-confg not found; did you mean web-config?',
          fix: 'set spec.volumes[0].configMap.name to web-config, or create ConfigMap/shop/web-confg',
        },
        {
          referent: 'Secret/shop/web-secrets',
          fieldPath: 'spec.containers[0].envFrom[0].secretRef.name',
          state: 'Ready',
          reason: 'Ready',
          message: 'Secret/shop/web-secrets is ready',
          fix: '',
        },
      ],
    },
  ],
};

describe('renderTable', () => {
  it('lays out columns the way kubectl does: no borders, three spaces, no trailing blanks', () => {
    expect(
      renderTable(
        ['NAME', 'STATE'],
        [
          ['Pod/shop/web', 'Ready'],
          ['x', 'NotFound'],
        ],
      ),
    ).toBe(['NAME           STATE', 'Pod/shop/web   Ready', 'x              NotFound'].join('\n'));
  });

  it('drops the header row with noHeaders, and prints nothing for no rows', () => {
    expect(renderTable(['NAME'], [['a']], { noHeaders: true })).toBe('a');
    expect(renderTable(['NAME'], [], { noHeaders: true })).toBe('');
  });

  it('aligns coloured cells by their visible width', () => {
    const c = pc.createColors(true);
    const lines = renderTable(
      ['STATE', 'X'],
      [
        [c.green('Ready'), 'a'],
        ['NotFound', 'b'],
      ],
    ).split('\n');
    expect(lines[1]).toBe(`${c.green('Ready')}      a`);
    expect(lines[2]).toBe('NotFound   b');
  });
});

describe('colour', () => {
  it('is on for a terminal only, off with NO_COLOR, forced by FORCE_COLOR', () => {
    expect(useColor({ isTTY: true }, {})).toBe(true);
    expect(useColor({ isTTY: false }, {})).toBe(false);
    expect(useColor({}, {})).toBe(false);
    expect(useColor({ isTTY: true }, { NO_COLOR: '1' })).toBe(false);
    expect(useColor({ isTTY: true }, { TERM: 'dumb' })).toBe(false);
    expect(useColor({ isTTY: false }, { FORCE_COLOR: '1' })).toBe(true);
  });
});

describe('age', () => {
  it("prints durations as kubectl's AGE column", () => {
    expect([0, 45_000, 192_000, 900_000, 7_500_000, 36_000_000, 5 * 86_400_000].map(age)).toEqual([
      '0s',
      '45s',
      '3m12s',
      '15m',
      '2h5m',
      '10h',
      '5d',
    ]);
  });
});

describe('explain output', () => {
  it('prints a summary line and one row per reference, with the fix only where needed', () => {
    const p = printer('table');
    printExplanation(p, EXPLANATION, 13_000);
    expect(p.out[0]).toBe(
      'Pod/shop/api: NotFound for 12s (NotFound: ConfigMap/shop/web-confg), 2 references, controller rules/Pod',
    );
    expect(p.out[1]!.split('\n')).toEqual([
      'REFERENT                   STATE      REASON     FIX',
      'ConfigMap/shop/web-confg   NotFound   NotFound   set spec.volumes[0].configMap.name to web-config, or create ConfigMap/shop/web-confg',
      'Secret/shop/web-secrets    Ready      Ready',
    ]);
  });

  it('leaves out how long when the start of the state is unknown (standalone)', () => {
    const p = printer('table');
    printExplanation(p, EXPLANATION, undefined);
    expect(p.out[0]).toBe(
      'Pod/shop/api: NotFound (NotFound: ConfigMap/shop/web-confg), 2 references, controller rules/Pod',
    );
  });

  it('adds field paths and messages in wide, and prints rows only with --no-headers', () => {
    const wide = printer('wide');
    printExplanation(wide, EXPLANATION, 13_000);
    expect(wide.out[1]).toMatch(/^REFERENT\s+FIELD\s+STATE\s+REASON\s+MESSAGE\s+FIX$/m);
    expect(wide.out[1]).toContain('did you mean web-config?');
    const bare = printer('table', { noHeaders: true });
    printExplanation(bare, EXPLANATION, 13_000);
    expect(bare.out).toHaveLength(1);
    expect(bare.out[0]!.split('\n')).toHaveLength(2);
  });

  it('prints the API shape as JSON or YAML', () => {
    const json = printer('json');
    printExplanation(json, EXPLANATION, 0);
    expect(JSON.parse(json.out[0]!)).toEqual(EXPLANATION);
    const yaml = printer('yaml');
    printExplanation(yaml, EXPLANATION, 0);
    expect(yaml.out[0]).toContain('object: Pod/shop/api');
    expect(renderData({ a: [1] }, 'yaml')).toBe('a:\n  - 1');
  });

  it('colours states on a terminal', () => {
    const p = printer('table', { color: true });
    printExplanation(p, EXPLANATION, 13_000);
    const c = pc.createColors(true);
    expect(p.out[1]).toContain(c.red('NotFound'));
    expect(p.out[1]).toContain(c.green('Ready'));
  });

  it('is resolved only when every reference is Ready', () => {
    expect(resolved(EXPLANATION)).toBe(false);
    const ok: Explanation = {
      ...EXPLANATION,
      controllers: [
        { ...EXPLANATION.controllers[0]!, state: 'Resolved', references: [EXPLANATION.controllers[0]!.references[1]!] },
      ],
    };
    expect(resolved(ok)).toBe(true);
  });
});

describe('stuck output', () => {
  it('prints one row per stuck referrer, and the API shape as JSON', () => {
    const item = {
      id: 'rules/Pod|Pod/shop/api',
      key: 'Pod/shop/api',
      controller: 'rules/Pod',
      state: 'NotFound' as const,
      since: 0,
      ageMs: 95_000,
      reason: 'NotFound',
      message: 'm',
      fix: 'create it',
      referent: 'ConfigMap/shop/x',
    };
    const p = printer('table');
    printStuck(p, [item], 30_000);
    expect(p.out[0]!.split('\n')).toEqual([
      'REFERRER       AGE     REASON     REFERENT           FIX',
      'Pod/shop/api   1m35s   NotFound   ConfigMap/shop/x   create it',
    ]);
    const json = printer('json');
    printStuck(json, [item], 30_000);
    expect(JSON.parse(json.out[0]!)).toEqual({ olderThanMs: 30_000, items: [item] });
  });
});
