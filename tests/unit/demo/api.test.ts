import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteDemoRun, getDemoRun, getDemoRuns, postDemoRun, stopDemoRun } from '@/server/api';
import { parseConfig } from '@/server/config';
import { startRuntime, type Runtime } from '@/server/runtime';
import { callHandler } from '../server/call';

let rt: Runtime;

const call = (fn: (rt: Runtime, req: Request) => Response | Promise<Response>, path: string, init?: RequestInit) =>
  callHandler(rt, fn, path, init);

const post = (body: unknown, headers: Record<string, string> = {}) =>
  call(postDemoRun, '/api/v1/demo/runs', {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json', ...headers },
  });

beforeAll(async () => {
  rt = await startRuntime(
    parseConfig({
      REFWATCH_GRACE: '300ms',
      REFWATCH_RULE_PACKS: 'none',
      REFWATCH_DEMO: 'on',
      REFWATCH_EXAMPLE: 'none',
    }),
  );
});

afterAll(async () => {
  await rt?.dispose();
});

describe('demo API', () => {
  it('is on by default on the embedded cluster', () => {
    expect(rt.demo).toBeDefined();
  });

  it('rejects a bad config, naming the field', async () => {
    const r = await post({ apps: 0 });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatchObject({ code: 'InvalidBody', field: 'apps' });
    expect(r.body.error.message).toMatch(/^apps: must be at least 1/);
    const unknown = await post({ apps: 2, colour: 'red' });
    expect(unknown.body.error).toMatchObject({ code: 'InvalidBody', field: 'colour' });
  });

  it('refuses a cross-origin start', async () => {
    const r = await post({ apps: 1 }, { origin: 'http://evil.example' });
    expect(r.status).toBe(403);
    expect(rt.demo!.list()).toHaveLength(0);
  });

  it('starts, lists, exports and deletes a run, one at a time', async () => {
    const created = await post({ apps: 3, readyAfter: { distribution: 'fixed', ms: 100 }, timeoutMs: 30_000 });
    expect(created.status).toBe(201);
    const id: string = created.body.id;
    expect(created.headers.get('location')).toBe(`/api/v1/demo/runs/${id}`);
    expect(created.body).toMatchObject({
      namespace: `refwatch-demo-${id}`,
      config: { apps: 3, backoffPreset: 'client-go' },
    });

    const second = await post({ apps: 1 });
    expect(second.status).toBe(409);
    expect(second.body.error.code).toBe('Conflict');
    expect(second.body.error.message).toContain(id);

    const list = await call(getDemoRuns, '/api/v1/demo/runs');
    expect(list.body.items.map((r: { id: string }) => r.id)).toEqual([id]);
    expect(list.body.items[0].latencies).toBeUndefined();

    await rt.demo!.get(id)!.finished;
    const done = await call(getDemoRun, `/api/v1/demo/runs/${id}`);
    expect(done.body.phase).toBe('Completed');
    expect(done.body.progress.resolved).toEqual({ watch: 3, backoff: 3 });
    expect(done.body.latencies.watch).toHaveLength(3);
    // The watch controller ran on the runtime's engine, where the dashboard sees it.
    const controller: string = created.body.watchController;
    expect(controller).toBe(`demo/watch/${id}`);
    expect(
      rt.changelog
        .snapshot({ entities: ['event'] })
        .entities.event.some((e) => e.controller === controller && e.type === 'Resolved'),
    ).toBe(true);
    // Completed, the run's graph stays on the engine until it is deleted.
    expect(rt.manager.controllerNames()).toContain(controller);
    expect(rt.manager.registry.referrers(controller)).toHaveLength(3);

    const csv = await call(getDemoRun, `/api/v1/demo/runs/${id}?format=csv`);
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(csv.headers.get('content-disposition')).toContain(`refwatch-demo-${id}.csv`);
    expect(csv.text.trim().split('\r\n')).toHaveLength(4);
    const exported = await call(getDemoRun, `/api/v1/demo/runs/${id}?format=json`);
    expect(exported.body.apps).toHaveLength(3);
    expect((await call(getDemoRun, `/api/v1/demo/runs/${id}?format=xml`)).status).toBe(400);

    const deleted = await call(deleteDemoRun, `/api/v1/demo/runs/${id}`, { method: 'DELETE' });
    expect(deleted.status).toBe(200);
    expect(deleted.body.phase).toBe('Completed');
    const gone = await call(getDemoRun, `/api/v1/demo/runs/${id}`);
    expect(gone.status).toBe(404);
    expect(gone.body.error.code).toBe('NotFound');
    const ns = await rt.connection.client
      .getJSON<{ items: unknown[] }>(`/apis/demo.refwatch.dev/v1alpha1/namespaces/refwatch-demo-${id}/apps`)
      .catch(() => ({ items: [] }));
    expect(ns.items).toHaveLength(0);
    expect(rt.manager.controllerNames()).not.toContain(controller);
  });

  it('stops a run and keeps its objects and exports until it is deleted', async () => {
    const created = await post({ apps: 3, readyAfter: { distribution: 'fixed', ms: 60_000 }, timeoutMs: 90_000 });
    expect(created.status).toBe(201);
    const id: string = created.body.id;
    const stopPath = `/api/v1/demo/runs/${id}/stop`;
    const apps = () =>
      rt.connection.client
        .getJSON<{ items: unknown[] }>(`/apis/demo.refwatch.dev/v1alpha1/namespaces/refwatch-demo-${id}/apps`)
        .catch(() => ({ items: [] }));

    const crossOrigin = await call(stopDemoRun, stopPath, {
      method: 'POST',
      headers: { origin: 'http://evil.example' },
    });
    expect(crossOrigin.status).toBe(403);
    expect(rt.demo!.get(id)!.isActive()).toBe(true);
    const unknown = await call(stopDemoRun, '/api/v1/demo/runs/abcdef/stop', { method: 'POST' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({ code: 'NotFound', field: 'id' });

    await expect.poll(async () => (await apps()).items.length, { timeout: 15_000 }).toBe(3);
    const stopped = await call(stopDemoRun, stopPath, { method: 'POST' });
    expect(stopped.status).toBe(200);
    expect(stopped.body).toMatchObject({ id, phase: 'Stopped', progress: { resolved: { watch: 0, backoff: 0 } } });
    expect(stopped.body.endedAt).toBeDefined();
    expect(stopped.body.latencies).toEqual({ watch: [], backoff: [] });

    // Kept: the run, its objects, its exports and its watch controller; stopping again answers the same.
    expect((await call(getDemoRun, `/api/v1/demo/runs/${id}`)).body.phase).toBe('Stopped');
    expect((await call(stopDemoRun, stopPath, { method: 'POST' })).body.phase).toBe('Stopped');
    expect((await apps()).items).toHaveLength(3);
    const csv = await call(getDemoRun, `/api/v1/demo/runs/${id}?format=csv`);
    expect(csv.status).toBe(200);
    expect(csv.text.trim().split('\r\n')).toHaveLength(4);
    expect(rt.manager.controllerNames()).toContain(stopped.body.watchController);
    expect(rt.demo!.get(id)!.pendingTimers()).toBe(0);

    const deleted = await call(deleteDemoRun, `/api/v1/demo/runs/${id}`, { method: 'DELETE' });
    expect(deleted.status).toBe(200);
    expect(deleted.body.phase).toBe('Stopped');
    expect((await call(getDemoRun, `/api/v1/demo/runs/${id}`)).status).toBe(404);
    expect((await call(stopDemoRun, stopPath, { method: 'POST' })).status).toBe(404);
    expect((await apps()).items).toHaveLength(0);
    expect(rt.manager.controllerNames()).not.toContain(stopped.body.watchController);
  });

  it('answers 404 for an id that is not one', async () => {
    const r = await call(getDemoRun, '/api/v1/demo/runs/nope');
    expect(r.status).toBe(404);
    expect(r.body.error.field).toBe('id');
  });
});
