import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  Manager,
  MemoryInformerSource,
  type ObservedReferent,
  type ObservedState,
  type ObserverOptions,
  type Resolution,
} from '@/lib/engine';
import { explain } from '@/lib/diagnose';
import { FakeClock } from '@/lib/queue';
import { isRefwatchError } from '@/lib/model';
import { APP_KIND, app, appKey } from './fixtures';

const HEALTH = 'HealthCheck.probes.example.com';
const healthKey = (name: string) => `${HEALTH}/shop/${name}`;
const INTERVAL = 1_000;

/** A health endpoint served by the test: GET /<name> answers with what `answers` holds for it (a status, or 'hang'). */
class HealthEndpoint {
  readonly answers = new Map<string, number | 'hang'>();
  readonly hits = new Map<string, number>();
  private readonly hanging = new Set<ServerResponse>();
  private server: Server | undefined;
  port = 0;

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const name = (req.url ?? '/').slice(1);
      this.hits.set(name, (this.hits.get(name) ?? 0) + 1);
      const answer = this.answers.get(name) ?? 404;
      if (answer === 'hang') {
        this.hanging.add(res);
        return;
      }
      res.writeHead(answer, { 'content-type': 'text/plain' }).end(answer === 200 ? 'ok' : `unhealthy ${name}`);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server!.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/** observeHttp is the observer the tests (and docs) use: 200 ready, 404 absent, anything else not ready. */
function observeHttp(urlOf: (r: ObservedReferent) => string) {
  return async (r: ObservedReferent, signal: AbortSignal): Promise<ObservedState> => {
    const res = await fetch(urlOf(r), { signal });
    const body = (await res.text()).slice(0, 80);
    if (res.status === 404) return { exists: false, ready: false, message: `${urlOf(r)} answers 404` };
    return { exists: true, ready: res.ok, message: res.ok ? undefined : `HTTP ${res.status}: ${body}` };
  };
}

interface Rig {
  clock: FakeClock;
  manager: Manager;
  source: MemoryInformerSource;
  seen: Map<string, Resolution[]>;
}

let endpoint: HealthEndpoint;
let rig: Rig | undefined;

beforeEach(async () => {
  endpoint = new HealthEndpoint();
  await endpoint.start();
});

afterEach(async () => {
  await rig?.manager.stop();
  rig = undefined;
  await endpoint.stop();
});

/** A manager whose "watch" controller resolves each App's spec.healthRef, a HealthCheck served by an observer. */
function start(observer: Partial<ObserverOptions> = {}): Rig {
  const clock = new FakeClock(Date.now());
  const source = new MemoryInformerSource({ priming: 'microtask' });
  const manager = new Manager({ source, clock, grace: 5_000, statsIntervalMs: 0 });
  manager.addObserver({
    kind: HEALTH,
    interval: INTERVAL,
    timeout: 500,
    observe: observeHttp((r) => `http://127.0.0.1:${endpoint.port}/${r.name}`),
    ...observer,
  });
  const seen = new Map<string, Resolution[]>();
  manager.addController({
    name: 'watch',
    for: APP_KIND,
    reconcile: (ctx) => {
      const spec = (ctx.object?.spec ?? {}) as Record<string, string>;
      seen.set(ctx.key, [ctx.resolve(healthKey(spec.healthRef!), 'spec.healthRef')]);
    },
  });
  manager.start();
  rig = { clock, manager, source, seen };
  return rig;
}

const stateOf = (r: Rig, name: string) => r.seen.get(appKey(name))?.[0];

/** declared waits until each App's first reconcile declared its reference, so its first poll is due. */
async function declared(r: Rig, ...names: string[]): Promise<void> {
  await vi.waitFor(() => {
    for (const name of names) expect(stateOf(r, name)).toBeDefined();
  });
}

/** scheduled waits until n timers are pending: each settled poll has scheduled its next one. */
async function scheduled(r: Rig, n: number): Promise<void> {
  await vi.waitFor(() => expect(r.clock.pendingTimers()).toBe(n));
}

/** polled waits until the observer made n polls and the next one is scheduled. */
async function polled(r: Rig, n: number): Promise<void> {
  await vi.waitFor(() => {
    r.manager.publishStats();
    expect(r.manager.changelog.get('controller', HEALTH)?.polls).toBe(n);
    expect(r.clock.pendingTimers()).toBe(1);
  });
}

/** poll fires the timers due within ms (the polls), then lets their HTTP round trips and reconciles finish. */
async function poll(r: Rig, ms: number, until: () => void): Promise<void> {
  r.clock.advance(ms);
  await vi.waitFor(until, { timeout: 3_000, interval: 5 });
}

describe('observers', () => {
  it('resolves NotPrimed before the first poll, then the polled state; ready → resolved within one interval', async () => {
    const r = start();
    endpoint.answers.set('orders-db', 503);
    r.source.apply(app('web', { healthRef: 'orders-db' }));
    await vi.waitFor(() => expect(stateOf(r, 'web')?.state).toBe('NotPrimed'));
    expect(stateOf(r, 'web')?.message).toContain('has not been polled yet');

    await poll(r, 0, () =>
      expect(stateOf(r, 'web')).toMatchObject({
        state: 'NotReady',
        reason: 'NotReady',
        message: 'HTTP 503: unhealthy orders-db',
      }),
    );
    expect(r.manager.changelog.get('referrer', `watch|${appKey('web')}`)).toMatchObject({ state: 'Waiting' });

    endpoint.answers.set('orders-db', 200);
    await polled(r, 1);
    await poll(r, INTERVAL, () => expect(stateOf(r, 'web')?.state).toBe('Ready'));
    expect(r.manager.changelog.get('referrer', `watch|${appKey('web')}`)).toMatchObject({ state: 'Resolved' });
    expect(r.manager.changelog.get('referent', healthKey('orders-db'))).toMatchObject({
      state: 'Ready',
      referencedBy: 1,
    });
  });

  it('polls a referent once per interval whatever the number of its referrers, and wakes only on a change', async () => {
    const r = start();
    endpoint.answers.set('orders-db', 200);
    for (const name of ['web', 'api', 'worker']) r.source.apply(app(name, { healthRef: 'orders-db' }));
    await declared(r, 'web', 'api', 'worker');
    await poll(r, 0, () => {
      for (const name of ['web', 'api', 'worker']) expect(stateOf(r, name)?.state).toBe('Ready');
    });
    const reconciles = r.manager.controller('watch')!.stats.reconciles;
    for (let i = 1; i <= 3; i++) {
      await polled(r, i);
      await poll(r, INTERVAL, () => expect(endpoint.hits.get('orders-db')).toBe(1 + i));
    }
    await polled(r, 4);
    expect(r.manager.controller('watch')!.stats.reconciles).toBe(reconciles);
    expect(r.manager.changelog.get('controller', HEALTH)).toMatchObject({
      source: 'poll',
      intervalMs: INTERVAL,
      state: 'Active',
      referents: 1,
      references: 3,
      errors: [],
    });
    expect(r.manager.changelog.get('controller', HEALTH)).toMatchObject({ polls: 4, lastPollAt: r.clock.now() });
  });

  it('a failing endpoint gives a clear reason: an HTTP 500, a refused connection, a hang (timed out, holding up no other poll)', async () => {
    const closed = new HealthEndpoint();
    await closed.start();
    const refusedPort = closed.port;
    await closed.stop();
    const r = start({
      observe: observeHttp(
        (ref) => `http://127.0.0.1:${ref.name === 'refused' ? refusedPort : endpoint.port}/${ref.name}`,
      ),
    });
    endpoint.answers.set('broken', 500);
    endpoint.answers.set('hung', 'hang');
    endpoint.answers.set('fine', 200);
    for (const name of ['broken', 'refused', 'hung', 'fine']) r.source.apply(app(name, { healthRef: name }));
    await declared(r, 'broken', 'refused', 'hung', 'fine');
    await poll(r, 0, () => {
      expect(stateOf(r, 'broken')).toMatchObject({ state: 'NotReady', message: 'HTTP 500: unhealthy broken' });
      expect(stateOf(r, 'refused')).toMatchObject({ state: 'NotReady', reason: 'ObserveFailed' });
      expect(stateOf(r, 'fine')?.state).toBe('Ready');
      expect(endpoint.hits.get('hung')).toBe(1);
    });
    expect(stateOf(r, 'refused')?.message).toMatch(/^observe failed: fetch failed \(.*ECONNREFUSED/);
    expect(stateOf(r, 'hung')?.state).toBe('NotPrimed');
    await scheduled(r, 4); // three next polls, and the hung poll's deadline

    await poll(r, 500, () =>
      expect(stateOf(r, 'hung')).toMatchObject({
        state: 'NotReady',
        reason: 'ObserveTimeout',
        message: 'no answer within 500 ms',
      }),
    );
    const controller = r.manager.changelog.get('controller', HEALTH)!;
    expect(controller.errors.map((e) => e.reason).sort()).toEqual(['ObserveFailed', 'ObserveTimeout']);

    const why = explain(r.manager, appKey('hung'), { now: r.clock.now() });
    expect(why.ok && why.value.controllers[0]!.references[0]).toMatchObject({
      state: 'NotReady',
      reason: 'ObserveTimeout',
      message: expect.stringContaining(
        `${healthKey('hung')} is not ready: no answer within 500 ms (polled 0 ms ago, every 1.0 s)`,
      ),
      fix: expect.stringContaining('raise the observer'),
    });
    const broken = explain(r.manager, appKey('broken'), { now: r.clock.now() });
    expect(broken.ok && broken.value.controllers[0]!.references[0]!.message).toContain(
      'is not ready: HTTP 500: unhealthy broken',
    );
  });

  it('never overlaps two polls of one referent, even when one outlives its timeout', async () => {
    let running = 0;
    let most = 0;
    let calls = 0;
    const release: (() => void)[] = [];
    const r = start({
      observe: () => {
        calls++;
        most = Math.max(most, ++running);
        // Ignores its signal on purpose: the next poll still waits for it to settle.
        return new Promise<ObservedState>((resolve) =>
          release.push(() => (running--, resolve({ exists: true, ready: true }))),
        );
      },
    });
    r.source.apply(app('web', { healthRef: 'slow' }));
    await declared(r, 'web');
    await poll(r, 0, () => expect(calls).toBe(1));
    await poll(r, 500, () => expect(stateOf(r, 'web')?.reason).toBe('ObserveTimeout'));
    r.clock.advance(5 * INTERVAL);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(calls).toBe(1);
    release.shift()!();
    await vi.waitFor(() => expect(r.clock.pendingTimers()).toBeGreaterThan(0));
    await poll(r, INTERVAL, () => expect(calls).toBe(2));
    expect(most).toBe(1);
  });

  it('stops when no referents are left (grace, then Cancelled) and its stop leaves no timer', async () => {
    const r = start();
    endpoint.answers.set('orders-db', 200);
    r.source.apply(app('web', { healthRef: 'orders-db' }));
    await declared(r, 'web');
    await poll(r, 0, () => expect(stateOf(r, 'web')?.state).toBe('Ready'));
    r.source.delete(appKey('web'));
    await vi.waitFor(() => expect(r.manager.changelog.get('controller', HEALTH)?.state).toBe('Grace'));
    expect(r.manager.changelog.get('referent', healthKey('orders-db'))).toBeUndefined();
    r.clock.advance(5_000);
    expect(r.manager.changelog.get('controller', HEALTH)).toMatchObject({ state: 'Cancelled', referents: 0 });
    expect(r.clock.pendingTimers()).toBe(0);
    const hits = endpoint.hits.get('orders-db');
    r.clock.advance(10 * INTERVAL);
    expect(endpoint.hits.get('orders-db')).toBe(hits);

    endpoint.answers.set('orders-db', 'hang');
    r.source.apply(app('web', { healthRef: 'orders-db' }));
    await vi.waitFor(() => expect(r.manager.changelog.get('controller', HEALTH)?.state).toBe('Active'));
    await poll(r, 0, () => expect(endpoint.hits.get('orders-db')).toBe((hits ?? 0) + 1));
    expect(r.manager.changelog.get('controller', HEALTH)?.state).toBe('Active');
    await r.manager.stop();
    expect(r.clock.pendingTimers()).toBe(0);
  });

  it('rejects a bad observer with an error naming the field', () => {
    const manager = new Manager({ source: new MemoryInformerSource(), statsIntervalMs: 0 });
    const observe = () => ({ exists: true, ready: true });
    const bad: [Partial<ObserverOptions>, string][] = [
      [{ kind: 'not a kind', interval: 1000 }, 'kind'],
      [{ kind: HEALTH, interval: 0 }, 'interval'],
      [{ kind: HEALTH, interval: 1000, timeout: -1 }, 'timeout'],
      [{ kind: HEALTH, interval: 1000, jitter: 2 }, 'jitter'],
    ];
    for (const [opts, field] of bad) {
      try {
        manager.addObserver({ observe, ...opts } as ObserverOptions);
        expect.unreachable(`${field} accepted`);
      } catch (e) {
        expect(isRefwatchError(e) && e.field).toBe(field);
      }
    }
    manager.addObserver({ kind: HEALTH, interval: 1000, observe });
    expect(() => manager.addObserver({ kind: HEALTH, interval: 1000, observe })).toThrow(/already exists/);
  });
});
