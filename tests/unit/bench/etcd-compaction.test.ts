import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { compactEtcd } from '@/bench/peer/etcd-compaction';

/** A stand-in for etcd's JSON gateway: answers range and compaction as `answer` says, and records what it was sent. */
async function fakeEtcd(answer: (path: string, body: Record<string, unknown>) => [number, unknown]) {
  const seen: [string, Record<string, unknown>][] = [];
  const server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => {
      const body = JSON.parse(text) as Record<string, unknown>;
      seen.push([req.url ?? '', body]);
      const [status, out] = answer(req.url ?? '', body);
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(out));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  servers.push(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

describe('compactEtcd', () => {
  it("compacts at the revision of the store's header and waits for the physical compaction", async () => {
    const etcd = await fakeEtcd((path) => [200, path === '/v3/kv/range' ? { header: { revision: '4711' } } : {}]);
    await expect(compactEtcd(etcd.url)).resolves.toBe(4711);
    expect(etcd.seen.map(([p]) => p)).toEqual(['/v3/kv/range', '/v3/kv/compaction']);
    expect(etcd.seen[1]![1]).toEqual({ revision: '4711', physical: true });
  });

  it('takes a revision compacted already as done: no run wrote since the last compaction', async () => {
    const etcd = await fakeEtcd((path) =>
      path === '/v3/kv/range'
        ? [200, { header: { revision: '12' } }]
        : [400, { error: 'etcdserver: mvcc: required revision has been compacted', code: 11 }],
    );
    await expect(compactEtcd(etcd.url)).resolves.toBe(12);
  });

  it('says which call failed and what etcd answered', async () => {
    const noRevision = await fakeEtcd(() => [200, { header: {} }]);
    await expect(compactEtcd(noRevision.url)).rejects.toThrow(
      `etcd at ${noRevision.url} gave no revision in its range answer's header`,
    );
    const refusing = await fakeEtcd(() => [503, { error: 'etcdserver: leader changed' }]);
    await expect(compactEtcd(refusing.url)).rejects.toThrow(
      'etcd /v3/kv/range answered 503: {"error":"etcdserver: leader changed"}',
    );
  });
});
