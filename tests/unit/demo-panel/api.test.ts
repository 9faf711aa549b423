import { afterEach, describe, expect, it, vi } from 'vitest';
import { DemoApiError, deleteRun, stopRun } from '@/components/demo/api';

/** Answers every fetch with body and status, and records what was asked. */
function answer(status: number, body: unknown): { method?: string; url?: string }[] {
  const calls: { method?: string; url?: string }[] = [];
  vi.stubGlobal('fetch', async (url: string, init: RequestInit) => {
    calls.push({ method: init.method, url });
    return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
  });
  return calls;
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("the panel's run actions", () => {
  it("Stop posts to the run's stop endpoint and keeps the run, Delete deletes it", async () => {
    const calls = answer(200, { id: 'abc123', phase: 'Stopped' });
    expect(await stopRun('abc123')).toMatchObject({ id: 'abc123', phase: 'Stopped' });
    await deleteRun('abc123');
    expect(calls).toEqual([
      { method: 'POST', url: '/api/v1/demo/runs/abc123/stop' },
      { method: 'DELETE', url: '/api/v1/demo/runs/abc123' },
    ]);
  });

  it('shows why a stop was refused', async () => {
    answer(404, { error: { code: 'NotFound', message: 'no demo run abc123', field: 'id' } });
    const e = await stopRun('abc123').catch((err: unknown) => err);
    expect(e).toBeInstanceOf(DemoApiError);
    expect(e).toMatchObject({ status: 404, code: 'NotFound', field: 'id', message: 'no demo run abc123' });
  });
});
