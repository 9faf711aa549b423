import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { ReferrerEntity } from '../../lib/changelog/entities';
import { getReadyz } from '../../server/api';
import { parseConfig } from '../../server/config';
import { getHistory, getHistoryState } from '../../server/history/api';
import { startRuntime, type Runtime } from '../../server/runtime';

/**
 * A restart on the embedded cluster: refwatch runs the example, stops, the
 * Secret is gone from the example it starts with next (as if deleted while
 * refwatch was down), and refwatch starts again on the same history file.
 */
const dir = mkdtempSync(join(tmpdir(), 'refwatch-history-restart-'));
const example = join(dir, 'example');
const historyFile = join(dir, 'history.db');
cpSync('deploy/example', example, { recursive: true });
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const WEB = 'Pod/refwatch-example/web';
const WORKER = 'Pod/refwatch-example/worker';
const SECRET = 'Secret/refwatch-example/db-password';

function referrer(rt: Runtime, key: string): ReferrerEntity | undefined {
  return rt.changelog.snapshot({ entities: ['referrer'] }).entities.referrer.find((r) => r.key === key);
}

async function start(): Promise<Runtime> {
  return startRuntime(
    parseConfig({ REFWATCH_EXAMPLE: example, REFWATCH_DEMO: 'off', REFWATCH_HISTORY: historyFile, HOME: dir }),
  );
}

describe('history across a restart', () => {
  it('shows a Secret deleted while refwatch was down, as seen at restart, and a stuck age that goes on', async () => {
    const rt1 = await start();
    let workerSince: number;
    try {
      await vi.waitFor(() => expect(referrer(rt1, WEB)?.state).toBe('Resolved'), { timeout: 30_000 });
      await vi.waitFor(() => expect(referrer(rt1, WORKER)?.state).toBe('NotFound'), { timeout: 30_000 });
      workerSince = referrer(rt1, WORKER)!.since;
      await rt1.store!.recorder.flush();
    } finally {
      await rt1.dispose();
    }
    const beforeRestart = Date.now();
    const config = join(example, '10-config.yaml');
    writeFileSync(
      config,
      readFileSync(config, 'utf8')
        .split(/^---$/m)
        .filter((doc) => !/kind: Secret/.test(doc))
        .join('---'),
    );
    await new Promise((r) => setTimeout(r, 1100));

    const rt2 = await start();
    try {
      await vi.waitFor(() => expect(referrer(rt2, WEB)?.state).toBe('NotFound'), { timeout: 30_000 });
      await vi.waitFor(() => expect(referrer(rt2, WORKER)?.since).toBe(workerSince), { timeout: 10_000 });
      await rt2.store!.recorder.flush();
      const res = await getHistory(
        rt2,
        new Request(`http://127.0.0.1/api/v1/history?object=${encodeURIComponent(WEB)}`),
      );
      expect(res.status).toBe(200);
      const body = (await res.json()) as {
        cluster: string;
        transitions: { type: string; object: string; state: string; message?: string }[];
      };
      expect(body.cluster).toBe('embedded');
      const secret = body.transitions.filter((t) => t.object === SECRET).map((t) => `${t.state}: ${t.message ?? ''}`);
      expect(secret[0]).toMatch(/^Ready: $/);
      expect(secret.at(-1)).toMatch(
        new RegExp(`^NotFound: ${SECRET} was deleted while refwatch was down \\(last seen \\d\\d:\\d\\d:\\d\\d\\)`),
      );
      const web = body.transitions.filter((t) => t.object === WEB && t.type === 'referrer').map((t) => t.state);
      expect(web).toEqual(['Resolved', 'NotFound']);
      // The moment before the restart, as the time picker asks for it: the Secret there, web Resolved.
      const then = await getHistoryState(
        rt2,
        new Request(`http://127.0.0.1/api/v1/history/state?at=${beforeRestart}&namespace=refwatch-example`),
      );
      expect(then.status).toBe(200);
      const past = (await then.json()) as { at: number; states: { type: string; object: string; state: string }[] };
      expect(past.at).toBe(beforeRestart);
      const stateOf = (type: string, key: string) =>
        past.states.filter((t) => t.type === type && t.object === key).map((t) => t.state);
      expect(stateOf('referent', SECRET)).toEqual(['Ready']);
      expect(stateOf('referrer', WEB)).toEqual(['Resolved']);
      expect(stateOf('referrer', WORKER)).toEqual(['NotFound']);
      await expect(
        getHistoryState(rt2, new Request('http://127.0.0.1/api/v1/history/state?at=yesterday')),
      ).rejects.toMatchObject({ status: 400, field: 'at', message: expect.stringContaining('"at" "yesterday"') });
      const ready = (await getReadyz(rt2).json()) as { warnings: string[] };
      expect(ready.warnings.filter((w) => w.startsWith('history'))).toEqual([]);
    } finally {
      await rt2.dispose();
    }
  });
});
