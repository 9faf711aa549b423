import { z } from 'zod';
import { RefwatchError } from '../../lib/model';

/** The largest run: 5,000 Apps and 5,000 of each referent kind, 20,000 objects in all. */
export const MAX_APPS = 5_000;
export const MAX_REFERENTS = 5_000;
/** Readiness delays and churn times stay within ten minutes, as runs do. */
export const MAX_DELAY_MS = 600_000;
export const MAX_TIMEOUT_MS = 600_000;
export const DEFAULT_TIMEOUT_MS = 120_000;

const count = (max: number) =>
  z
    .number({ error: `must be a whole number from 1 to ${max}` })
    .int(`must be a whole number from 1 to ${max}`)
    .min(1, `must be at least 1`)
    .max(max, `must be at most ${max}`);
const delayMs = z
  .number({ error: `must be a number of milliseconds from 0 to ${MAX_DELAY_MS}` })
  .int('must be a whole number of milliseconds')
  .min(0, 'must not be negative')
  .max(MAX_DELAY_MS, `must be at most ${MAX_DELAY_MS} ms (10 minutes)`);
const fraction = z
  .number({ error: 'must be a fraction from 0 to 1' })
  .min(0, 'must be a fraction from 0 to 1')
  .max(1, 'must be a fraction from 0 to 1');

export const readyAfterSchema = z.discriminatedUnion(
  'distribution',
  [
    z
      .strictObject({ distribution: z.literal('uniform'), minMs: delayMs, maxMs: delayMs })
      .refine((d) => d.maxMs >= d.minMs, { message: 'must be at least minMs', path: ['maxMs'] }),
    z.strictObject({ distribution: z.literal('fixed'), ms: delayMs }),
  ],
  { error: 'must be {distribution: "uniform", minMs, maxMs} or {distribution: "fixed", ms}' },
);

/**
 * demoConfigSchema validates a run's configuration. Every bound is there so
 * that a run is bounded in size and in time. Referent counts default to one
 * per App; App i refers to Database i mod databases, and likewise for Caches
 * and Secrets.
 */
export const demoConfigSchema = z
  .strictObject({
    apps: count(MAX_APPS).default(100),
    databases: count(MAX_REFERENTS).optional(),
    caches: count(MAX_REFERENTS).optional(),
    secrets: count(MAX_REFERENTS).optional(),
    readyAfter: readyAfterSchema.default({ distribution: 'uniform', minMs: 1_000, maxMs: 20_000 }),
    dangling: z
      .strictObject({
        typo: fraction.default(0),
        wrongNamespace: fraction.default(0),
        kindNotInstalled: fraction.default(0),
      })
      .refine((d) => d.typo + d.wrongNamespace + d.kindNotInstalled <= 1, {
        message: 'the fractions must add up to at most 1',
        path: ['typo'],
      })
      .default({ typo: 0, wrongNamespace: 0, kindNotInstalled: 0 }),
    churn: z
      .strictObject({
        dropKind: z.literal('Cache', { error: 'must be "Cache": the run drops every App\'s cacheRef' }),
        afterMs: delayMs,
      })
      .optional(),
    backoffPreset: z
      .enum(['client-go', 'crossplane'], { error: 'must be "client-go" or "crossplane"' })
      .default('client-go'),
    timeoutMs: z
      .number({ error: `must be a number of milliseconds from 1000 to ${MAX_TIMEOUT_MS}` })
      .int('must be a whole number of milliseconds')
      .min(1_000, 'must be at least 1000 ms')
      .max(MAX_TIMEOUT_MS, `must be at most ${MAX_TIMEOUT_MS} ms (10 minutes)`)
      .default(DEFAULT_TIMEOUT_MS),
    /** Seeds the delays and the choice of dangling Apps, so a scenario can be replayed. */
    seed: z
      .number({ error: 'must be a whole number' })
      .int('must be a whole number')
      .min(0)
      .max(2 ** 32 - 1)
      .optional(),
  })
  .transform((c) => ({
    ...c,
    databases: c.databases ?? c.apps,
    caches: c.caches ?? c.apps,
    secrets: c.secrets ?? c.apps,
  }));

export type DemoConfigInput = z.input<typeof demoConfigSchema>;
export type DemoConfig = z.output<typeof demoConfigSchema>;
export type BackoffPreset = DemoConfig['backoffPreset'];

/** parseDemoConfig validates input; the error names the field at fault and what it accepts. */
export function parseDemoConfig(input: unknown): DemoConfig {
  const r = demoConfigSchema.safeParse(input ?? {});
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  const path = issue.path.map(String).join('.');
  if (issue.code === 'unrecognized_keys') {
    const field = path ? `${path}.${issue.keys[0]}` : issue.keys[0]!;
    throw new RefwatchError(
      'InvalidDemoConfig',
      `${field}: unknown field; remove it (fields are apps, databases, caches, secrets, readyAfter, dangling, churn, backoffPreset, timeoutMs, seed)`,
      { field },
    );
  }
  const field = path || '(config)';
  throw new RefwatchError('InvalidDemoConfig', `${field}: ${issue.message}`, { field });
}

const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m)?$/;

/** parseDelay reads 250ms, 1.5s, 2m or bare milliseconds. */
export function parseDelay(text: string, field: string): number {
  const m = DURATION.exec(text.trim());
  if (!m)
    throw new RefwatchError('InvalidDuration', `${field} "${text}" is not a duration: use a number with ms, s or m`, {
      field,
      example: '20s',
    });
  const unit = m[2] ?? 'ms';
  return Math.round(Number(m[1]) * (unit === 'ms' ? 1 : unit === 's' ? 1000 : 60_000));
}

/** parseReadyAfter reads `1s..20s` (uniform) or `5s` (fixed), as the CLI's --ready-after takes it. */
export function parseReadyAfter(text: string, field = '--ready-after'): DemoConfig['readyAfter'] {
  const parts = text.split('..');
  if (parts.length === 1) return { distribution: 'fixed', ms: parseDelay(parts[0]!, field) };
  if (parts.length !== 2)
    throw new RefwatchError(
      'InvalidDuration',
      `${field} "${text}" must be MIN..MAX (e.g. 1s..20s) or one duration (e.g. 5s)`,
      { field, example: '1s..20s' },
    );
  const minMs = parseDelay(parts[0]!, field);
  const maxMs = parseDelay(parts[1]!, field);
  if (maxMs < minMs)
    throw new RefwatchError('InvalidDuration', `${field} "${text}": the maximum is below the minimum`, {
      field,
      example: '1s..20s',
    });
  return { distribution: 'uniform', minMs, maxMs };
}
