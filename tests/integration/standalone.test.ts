import http from 'node:http';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LEAN_MEDIA_TYPE, decodeSnapshot } from '@/lib/changelog';
import {
  copyStandalone,
  startStandalone,
  waitReady,
  type StandaloneCopy,
  type StandaloneServer,
} from '../setup/standalone';

// The standalone server runs its own embedded cluster whichever test cluster is selected; the build is shared by both passes.
let copy: StandaloneCopy;
let server: StandaloneServer;

beforeAll(async () => {
  copy = copyStandalone();
  server = await startStandalone(copy.dir);
}, 600_000);

afterAll(async () => {
  await server?.stop();
  copy?.remove();
});

describe('standalone server, copied outside the repository and read-only', () => {
  it('becomes ready on its embedded cluster', async () => {
    const r = await waitReady(server.url);
    expect(r.status, r.body).toBe(200);
  });

  it('serves the dashboard page and the assets it links to', async () => {
    const res = await fetch(`${server.url}/`);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain('<title>refwatch</title>');
    const assets = [...html.matchAll(/(?:href|src)="(\/_next\/static\/[^"]+)"/g)].map((m) => m[1]!);
    expect(assets.length).toBeGreaterThan(0);
    for (const a of assets.slice(0, 10)) expect((await fetch(`${server.url}${a}`)).status, a).toBe(200);
  });

  it('answers the API from the embedded cluster, whose CRDs it read from its own folder', async () => {
    const res = await fetch(`${server.url}/api/v1/snapshot`);
    expect(res.status).toBe(200);
    const snap = (await res.json()) as { cluster: { mode: string; reachable: boolean } };
    expect(snap.cluster).toMatchObject({ mode: 'embedded', reachable: true });
    // The demo installs its kinds from deploy/demo/crds.yaml: a missing file would have stopped the runtime.
    expect(server.output()).not.toMatch(/could not start|ENOENT|EACCES|EROFS/);
  });

  it('gzips the snapshot for a client that accepts it, and never the event stream', async () => {
    const lean = { accept: LEAN_MEDIA_TYPE };
    const zipped = await rawGet(`${server.url}/api/v1/snapshot`, { ...lean, 'accept-encoding': 'gzip, deflate, br' });
    expect(zipped.headers['content-encoding']).toBe('gzip');
    const snap = decodeSnapshot(JSON.parse(gunzipSync(zipped.body).toString('utf8')));
    expect(snap.cluster).toMatchObject({ mode: 'embedded', reachable: true });
    const plain = await rawGet(`${server.url}/api/v1/snapshot`, lean);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(decodeSnapshot(JSON.parse(plain.body.toString('utf8'))).revision).toBeGreaterThan(0);
    const stream = await rawGet(
      `${server.url}/api/v1/stream?format=lean`,
      { 'accept-encoding': 'gzip', accept: 'text/event-stream' },
      '"format":"refwatch.lean/1"',
    );
    expect(stream.headers['content-encoding']).toBeUndefined();
    expect(stream.body.toString('utf8')).toMatch(/^id: \d+\nevent: snapshot\ndata: \{"format":"refwatch\.lean\/1"/);
  });
});

/** rawGet reads a response as sent (fetch would decompress it), up to `until` when given. */
function rawGet(
  url: string,
  headers: Record<string, string>,
  until?: string,
): Promise<{ headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => {
        chunks.push(c);
        if (until !== undefined && Buffer.concat(chunks).includes(until)) {
          req.destroy();
          resolve({ headers: res.headers, body: Buffer.concat(chunks) });
        }
      });
      res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', (e) => (req.destroyed && until !== undefined ? undefined : reject(e)));
  });
}
