import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { WatchTarget } from '@/lib/engine/informer-source';
import {
  Discovery,
  KubeClient,
  LogRateLimiter,
  Reflector,
  WatchTelemetry,
  createLogger,
  formatJsonLine,
  formatTextLine,
  parseLogLevel,
  type WatchLifecycle,
} from '@/lib/kube';
import { DATABASE, FakeApiServer } from './fake-apiserver';
import { LogCapture, until } from './helpers';

const AT = Date.parse('2026-11-23T14:00:00.000Z');
const POD: WatchTarget = { group: '', kind: 'Pod' };

describe('LogRateLimiter', () => {
  it('lets the first line through, then one per window, counting the dropped ones per key', () => {
    let now = 0;
    const limiter = new LogRateLimiter({ windowMs: 60_000, now: () => now });
    expect(limiter.take('Pod|Unreachable')).toEqual({ allowed: true, suppressed: 0, sinceMs: 0 });
    const verdicts = [];
    for (now = 1000; now < 60_000; now += 1000) verdicts.push(limiter.take('Pod|Unreachable').allowed);
    expect(verdicts.every((v) => !v)).toBe(true);
    expect(limiter.take('Secret|Unreachable').allowed).toBe(true); // another key has its own budget
    now = 60_000;
    expect(limiter.take('Pod|Unreachable')).toEqual({ allowed: true, suppressed: 59, sinceMs: 60_000 });
    now = 61_000;
    expect(limiter.take('Pod|Unreachable')).toEqual({ allowed: false, suppressed: 1, sinceMs: 1000 });
    limiter.forget('Pod|');
    expect(limiter.take('Pod|Unreachable').allowed).toBe(true);
  });
});

describe('log lines', () => {
  it('formats JSON lines with time, level and msg first and no undefined fields', () => {
    expect(
      formatJsonLine(AT, 'warn', 'watch of Pod failed', {
        kind: 'Pod',
        reason: 'Unreachable',
        retryInMs: 800,
        namespace: undefined,
      }),
    ).toBe(
      '{"time":"2026-11-23T14:00:00.000Z","level":"warn","msg":"watch of Pod failed","kind":"Pod","reason":"Unreachable","retryInMs":800}',
    );
  });

  it('formats text lines for a terminal, quoting values with spaces', () => {
    expect(
      formatTextLine(AT, 'info', 'relisted Pod', {
        kind: 'Pod',
        reason: 'Expired',
        note: 'two words',
        skipped: undefined,
      }),
    ).toBe('2026-11-23T14:00:00.000Z INFO  relisted Pod kind=Pod reason=Expired note="two words"');
  });

  it('drops lines below the level and picks the format', () => {
    const out: string[] = [];
    const log = createLogger({ level: 'warn', write: (l) => out.push(l), now: () => AT });
    log.debug('d');
    log.info('i');
    log.warn('w', { kind: 'Pod' });
    log.error('e');
    expect(out.map((l) => (JSON.parse(l) as { msg: string }).msg)).toEqual(['w', 'e']);
    const text: string[] = [];
    createLogger({ level: 'debug', format: 'text', write: (l) => text.push(l), now: () => AT }).debug('hello', {
      a: 1,
    });
    expect(text).toEqual(['2026-11-23T14:00:00.000Z DEBUG hello a=1']);
    const silent: string[] = [];
    createLogger({ level: 'silent', write: (l) => silent.push(l) }).error('nobody hears this');
    expect(silent).toEqual([]);
  });

  it('never throws when the stream does', () => {
    const log = createLogger({
      write: () => {
        throw new Error('EPIPE');
      },
    });
    expect(() => log.error('x')).not.toThrow();
  });

  it('reads REFWATCH_LOG_LEVEL and names the setting when it is wrong', () => {
    expect(parseLogLevel(undefined)).toBeUndefined();
    expect(parseLogLevel(' DEBUG ')).toBe('debug');
    expect(parseLogLevel('silent')).toBe('silent');
    expect(() => parseLogLevel('verbose')).toThrow(
      'REFWATCH_LOG_LEVEL=verbose is not a log level: use debug, info, warn, error or silent',
    );
  });
});

describe('WatchTelemetry', () => {
  const failure = (retryInMs: number): WatchLifecycle => ({
    type: 'ended',
    reason: 'Unreachable',
    message: 'connect ECONNREFUSED 127.0.0.1:6443',
    retryInMs,
  });

  it('logs an API server outage in a few lines and counts every restart', () => {
    let now = 0;
    const log = new LogCapture();
    const t = new WatchTelemetry({ logger: log, now: () => now });
    // Two minutes of failures every 2 s on two watches, then recovery.
    for (now = 0; now < 120_000; now += 2000) {
      t.record(POD, failure(2000));
      t.record({ group: 'demo.refwatch.dev', kind: 'Database', namespace: 'shop' }, failure(2000));
    }
    t.record(POD, { type: 'recovered', downMs: 120_000, failures: 60 });
    expect(log.text).toEqual([
      'warn watch of Pod failed: connect ECONNREFUSED 127.0.0.1:6443; retrying in 2.0 s',
      'warn watch of Database.demo.refwatch.dev in shop failed: connect ECONNREFUSED 127.0.0.1:6443; retrying in 2.0 s',
      'warn watch of Pod failed: connect ECONNREFUSED 127.0.0.1:6443; retrying in 2.0 s (29 failures suppressed in the last 60 s)',
      'warn watch of Database.demo.refwatch.dev in shop failed: connect ECONNREFUSED 127.0.0.1:6443; retrying in 2.0 s (29 failures suppressed in the last 60 s)',
      'info watch of Pod recovered after 120.0 s (60 failed attempts)',
    ]);
    // A watch started again after its last release logs its first failure at once.
    t.forget(POD);
    t.record(POD, failure(2000));
    expect(log.text.at(-1)).toBe('warn watch of Pod failed: connect ECONNREFUSED 127.0.0.1:6443; retrying in 2.0 s');
    expect(log.lines[2]!.fields).toEqual({
      kind: 'Pod',
      event: 'watch_ended',
      reason: 'Unreachable',
      resourceVersion: undefined,
      retryInMs: 2000,
      suppressed: 29,
    });
    expect(log.lines[1]!.fields).toMatchObject({ kind: 'Database.demo.refwatch.dev', namespace: 'shop' });
    expect(t.restartCounts()).toEqual([
      { kind: 'Pod', reason: 'Unreachable', count: 61 },
      { kind: 'Database.demo.refwatch.dev', reason: 'Unreachable', count: 60 },
    ]);
  });

  it('words a 410 like client-go and reports the relist with what it changed', () => {
    const log = new LogCapture();
    const t = new WatchTelemetry({ logger: log });
    t.record(POD, {
      type: 'ended',
      reason: 'Expired',
      message: 'too old resource version: 5 (12) (410 Gone)',
      resourceVersion: '5',
    });
    t.record(POD, { type: 'relisted', reason: 'Expired', objects: 42, changes: 3, durationMs: 120 });
    t.record(POD, {
      type: 'ended',
      reason: 'Closed',
      message: 'the server closed it after 7 events',
      resourceVersion: '40',
    });
    t.record(POD, { type: 'ended', reason: 'Inactive', message: 'no watch event for 90000 ms', resourceVersion: '41' });
    expect(log.text).toEqual([
      'info watch of Pod ended with: too old resource version: 5 (12) (410 Gone); relisting',
      'info relisted Pod after 410 Gone: 42 objects in 120 ms, 3 changed while unwatched',
      'debug watch of Pod ended with: the server closed it after 7 events; resuming from resourceVersion 40',
      'warn watch of Pod ended with: no watch event for 90000 ms; resuming from resourceVersion 41',
    ]);
    expect(t.relistCounts()).toEqual([{ kind: 'Pod', reason: 'Expired', count: 1 }]);
    expect(t.restartCounts().map((c) => `${c.reason}=${c.count}`)).toEqual(['Expired=1', 'Closed=1', 'Inactive=1']);
  });
});

describe('Reflector lifecycle', () => {
  const SHOP_DB: WatchTarget = { group: 'demo.refwatch.dev', kind: 'Database', namespace: 'shop' };
  let server: FakeApiServer;
  let reflector: Reflector | undefined;
  beforeEach(async () => {
    server = await FakeApiServer.start();
  });
  afterEach(async () => {
    await reflector?.stop();
    await server.stop();
  });

  function start(opts: { watchList?: boolean; inactivityTimeoutMs?: number } = {}) {
    const client = KubeClient.fromKubeconfig(server.kubeconfig());
    const events: WatchLifecycle[] = [];
    reflector = new Reflector({
      target: SHOP_DB,
      client,
      discovery: new Discovery(client),
      onEvent: () => {},
      onLifecycle: (e) => events.push(e),
      backoff: { initialMs: 10, maxMs: 40 },
      ...opts,
    });
    reflector.start();
    return { r: reflector, events };
  }

  it('reports a 410 as an Expired end, then the relist with what changed', async () => {
    for (const n of ['a', 'b']) server.create(DATABASE, n, { namespace: 'shop' });
    const { r, events } = start({ watchList: false });
    await until(() => r.isPrimed() && server.openWatches() === 1, 'watching');
    const rv = r.status().resourceVersion;
    server.closeWatches();
    server.delete(DATABASE, 'a', 'shop');
    server.compact();
    await until(() => events.some((e) => e.type === 'relisted'), 'relisted');
    expect(events.map((e) => `${e.type}${'reason' in e ? ` ${e.reason}` : ''}`)).toEqual([
      'ended Closed',
      'ended Expired',
      'relisted Expired',
    ]);
    expect(events[1]).toMatchObject({ resourceVersion: rv, message: expect.stringContaining('(410 Gone)') });
    expect(events[2]).toMatchObject({ objects: 1, changes: 1 });
    expect(r.status().lastEventAt).toBeGreaterThan(0);
  });

  it('reports each failure with its retry delay, and the recovery with how long it took', async () => {
    const { r, events } = start();
    await until(() => r.isPrimed() && server.openWatches() === 1, 'watching');
    server.failNext(3, 503);
    server.closeWatches();
    await until(() => events.some((e) => e.type === 'recovered'), 'recovered');
    const failures = events.filter((e) => e.type === 'ended' && e.reason === 'ServerError');
    expect(failures).toHaveLength(3);
    for (const f of failures) expect(f).toMatchObject({ retryInMs: expect.any(Number) });
    const rec = events.find((e) => e.type === 'recovered')!;
    expect(rec).toMatchObject({ failures: 3 });
    expect(rec.type === 'recovered' && rec.downMs).toBeGreaterThanOrEqual(0);
    expect(r.status().failingSince).toBeUndefined();
  });

  it('reports a silent watch as Inactive', async () => {
    const { events } = start({ inactivityTimeoutMs: 100 });
    await until(() => events.some((e) => e.type === 'ended' && e.reason === 'Inactive'), 'inactive');
    expect(events.find((e) => e.type === 'ended')).toMatchObject({
      reason: 'Inactive',
      message: 'no watch event for 100 ms',
    });
  });
});
