import { afterEach, describe, expect, it, vi } from 'vitest';
import { Manager, MemoryInformerSource, type ReconcileContext } from '@/lib/engine';
import type { Logger } from '@/lib/kube';
import { FakeClock } from '@/lib/queue';
import { APP_KIND, app, appKey } from './fixtures';

let manager: Manager | undefined;
let release: (() => void) | undefined;
afterEach(async () => {
  release?.();
  release = undefined;
  await manager?.stop();
  manager = undefined;
});

/** A manager whose controller's reconcile of App shop/hung ignores ctx.signal and never returns on its own. */
function rig(opts: { gracefulShutdownTimeout?: number } = {}) {
  const clock = new FakeClock(Date.now());
  const source = new MemoryInformerSource({ priming: 'sync' });
  const warnings: { msg: string; fields?: Record<string, unknown> }[] = [];
  const logger: Logger = { debug() {}, info() {}, warn: (msg, fields) => warnings.push({ msg, fields }), error() {} };
  const m = (manager = new Manager({ source, clock, statsIntervalMs: 0, logger, ...opts }));
  let running = 0;
  let finished = 0;
  const hung = new Promise<void>((resolve) => (release = resolve));
  m.addController({
    name: 'watch',
    for: APP_KIND,
    reconcile: async (ctx: ReconcileContext) => {
      running++;
      if (ctx.key === appKey('hung')) await hung;
      finished++;
    },
  });
  m.start();
  source.apply(app('hung', {}));
  const settled = (n: number) => vi.waitFor(() => expect(running).toBe(n));
  return { m, clock, source, warnings, settled, finished: () => finished };
}

/** stopped resolves a promise's settling into a flag the test can read after turns of the event loop. */
function watch(p: Promise<void>): { done: boolean } {
  const state = { done: false };
  void p.then(() => (state.done = true));
  return state;
}

const tick = () => new Promise((r) => setTimeout(r, 10));

describe('graceful-shutdown timeout', () => {
  it('Manager.stop gives up on a reconcile that ignores ctx.signal after the timeout (30 s by default) and logs its key', async () => {
    const { m, clock, source, warnings, settled } = rig();
    await settled(1);

    const stop = watch(m.stop());
    await vi.waitFor(() => expect(clock.pendingTimers()).toBe(1));
    clock.advance(29_999);
    await tick();
    expect(stop.done).toBe(false);

    clock.advance(1);
    await vi.waitFor(() => expect(stop.done).toBe(true));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.msg).toContain(appKey('hung'));
    expect(warnings[0]!.msg).toContain('30000 ms');
    expect(warnings[0]!.fields).toMatchObject({
      event: 'shutdown_abandoned',
      controller: 'watch',
      keys: appKey('hung'),
    });
    expect(source.openWatches()).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('what an abandoned reconcile does when it ends at last is dropped', async () => {
    const { m, clock, settled, finished } = rig({ gracefulShutdownTimeout: 1_000 });
    await settled(1);
    const stop = watch(m.stop());
    await vi.waitFor(() => expect(clock.pendingTimers()).toBe(1));
    clock.advance(1_000);
    await vi.waitFor(() => expect(stop.done).toBe(true));
    const revision = m.changelog.revision;

    release!();
    await vi.waitFor(() => expect(finished()).toBe(1));
    await tick();
    expect(m.changelog.revision).toBe(revision);
    expect(m.changelog.get('referrer', `watch|${appKey('hung')}`)).toBeUndefined();
  });

  it('removeController (a demo run deleted) ends after the timeout too, and the other keys were reconciled', async () => {
    const { m, clock, source, warnings, settled } = rig({ gracefulShutdownTimeout: 5_000 });
    source.apply(app('web', {}));
    await settled(2);
    const removed = watch(m.removeController('watch'));
    await vi.waitFor(() => expect(clock.pendingTimers()).toBe(1));
    await tick();
    expect(removed.done).toBe(false);
    clock.advance(5_000);
    await vi.waitFor(() => expect(removed.done).toBe(true));
    expect(m.controller('watch')).toBeUndefined();
    expect(warnings.map((w) => w.fields?.keys)).toEqual([appKey('hung')]);
  });

  it('a stop whose reconciles end in time waits for no timeout and leaves no timer', async () => {
    const { m, clock, warnings, settled } = rig();
    await settled(1);
    release!();
    await m.stop();
    expect(warnings).toEqual([]);
    expect(clock.pendingTimers()).toBe(0);
  });

  it('refuses a gracefulShutdownTimeout that is not a number of ms, naming the option', () => {
    expect(() => new Manager({ source: new MemoryInformerSource(), gracefulShutdownTimeout: -1 })).toThrow(
      /gracefulShutdownTimeout must be a finite number of milliseconds >= 0, got -1/,
    );
  });
});
