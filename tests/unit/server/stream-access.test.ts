import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getStream, postStreamTicket } from '@/server/api';
import { parseConfig } from '@/server/config';
import { accessPolicy, guardAccess, guardMutation, type AccessPolicy } from '@/server/http/guard';
import { MutationLimits } from '@/server/http/limits';
import { StreamTickets, TICKET_TTL_MS, processStreamTickets } from '@/server/http/tickets';
import { toResponse } from '@/server/http/errors';
import { startRuntime, type Runtime } from '@/server/runtime';
import { BASE, callHandler } from './call';

const TOKEN = 'k8s-refwatch-token-0123456789';
const POD = { eth0: [{ address: '10.244.1.7' }] };
const host = '127.0.0.1:3000';
const bearer = { host, authorization: `Bearer ${TOKEN}` };

/** A server bound beyond loopback (reads need the token), with the process's ticket office. */
const exposed = () => accessPolicy(parseConfig({ REFWATCH_HOST: '0.0.0.0', REFWATCH_TOKEN: TOKEN }), POD);

/** refusal is what guardAccess answers for a request: undefined when it passes. */
async function refusal(policy: AccessPolicy, path: string, init: RequestInit = {}) {
  try {
    guardAccess(new Request(BASE + path, { ...init, headers: { host, ...(init.headers as object) } }), policy);
    return undefined;
  } catch (e) {
    const res = toResponse(e);
    return { status: res.status, body: (await res.json()) as { error: { code: string; message: string } } };
  }
}

let rt: Runtime;

beforeAll(async () => {
  rt = await startRuntime(
    parseConfig({
      REFWATCH_TOKEN: TOKEN,
      REFWATCH_RULE_PACKS: 'none',
      REFWATCH_DEMO: 'off',
      REFWATCH_EXAMPLE: 'none',
      REFWATCH_STREAMS_PER_CLIENT: '2',
      REFWATCH_STREAMS_TOTAL: '3',
    }),
  );
});
afterAll(async () => {
  await rt?.dispose();
});

/** open opens a stream as its route does, from `client`; close() ends it as a client that leaves. */
async function open(path: string, client: string) {
  const abort = new AbortController();
  const r = await callHandlerStream(path, client, abort.signal);
  return { ...r, close: () => abort.abort() };
}

async function callHandlerStream(path: string, client: string, signal: AbortSignal) {
  let res: Response;
  try {
    res = getStream(rt, new Request(BASE + path, { headers: { host, 'x-forwarded-for': client }, signal }));
  } catch (e) {
    res = toResponse(e);
  }
  if (res.status !== 200) return { status: res.status, body: (await res.json()) as { error: { message: string } } };
  return { status: 200, body: undefined };
}

async function ticket(): Promise<string> {
  const r = await callHandler(rt, postStreamTicket, '/api/v1/stream/tickets', { method: 'POST', headers: bearer });
  expect(r.status).toBe(201);
  expect(r.body.expiresAt).toBeGreaterThan(Date.now());
  return r.body.ticket as string;
}

describe('stream tickets', () => {
  it('are given only for the token', async () => {
    for (const headers of [{ host }, { host, authorization: 'Bearer not-the-token-at-all' }] as Record<
      string,
      string
    >[]) {
      const r = await callHandler(rt, postStreamTicket, '/api/v1/stream/tickets', { method: 'POST', headers });
      expect(r.status).toBe(401);
      expect(r.body.error.message).toContain('Authorization: Bearer <token>');
    }
  });

  it('open one stream: the proxy lets it through, the stream uses it up, and a second connection is refused', async () => {
    const t = await ticket();
    const path = `/api/v1/stream?overview=1&ticket=${encodeURIComponent(t)}`;
    expect(await refusal(exposed(), path)).toBeUndefined();
    const first = await open(path, '10.0.0.1');
    expect(first.status).toBe(200);
    first.close();
    const again = await refusal(exposed(), path);
    expect(again?.status).toBe(401);
    expect(again?.body.error.message).toMatch(/already opened a stream.*POST \/api\/v1\/stream\/tickets/);
    const second = await open(path, '10.0.0.1');
    expect(second.status).toBe(401);
  });

  it('expire 60 s after they are given', async () => {
    let now = 1_000_000;
    const tickets = new StreamTickets(TOKEN, { now: () => now });
    const policy = accessPolicy(parseConfig({ REFWATCH_HOST: '0.0.0.0', REFWATCH_TOKEN: TOKEN }), POD, tickets);
    const { ticket: t, expiresAt } = tickets.issue();
    expect(expiresAt).toBe(now + TICKET_TTL_MS);
    now += TICKET_TTL_MS;
    expect(await refusal(policy, `/api/v1/stream?ticket=${t}`)).toBeUndefined();
    now += 1;
    const late = await refusal(policy, `/api/v1/stream?ticket=${t}`);
    expect(late?.status).toBe(401);
    expect(late?.body.error.message).toMatch(/expired \(a ticket lasts 60 s\)/);
    expect(tickets.redeem(t)).toBe('expired');
  });

  it('forget redeemed tickets once they would have expired anyway', () => {
    let now = 0;
    const tickets = new StreamTickets(TOKEN, { now: () => now });
    for (let i = 0; i < 100; i++) expect(tickets.redeem(tickets.issue().ticket)).toBeUndefined();
    expect(tickets.remembered).toBe(100);
    now += TICKET_TTL_MS + 1;
    expect(tickets.remembered).toBe(0);
  });

  it('are refused when forged, or issued under another token', async () => {
    const t = new StreamTickets('another-token-0123456789').issue().ticket;
    const r = await refusal(exposed(), `/api/v1/stream?ticket=${t}`);
    expect(r?.body.error.message).toMatch(/not issued by this server/);
    const [expiry, nonce] = (await ticket()).split('.');
    expect((await refusal(exposed(), `/api/v1/stream?ticket=${expiry}9.${nonce}.AAAA`))?.status).toBe(401);
    expect((await refusal(exposed(), '/api/v1/stream?ticket=nonsense'))?.body.error.message).toMatch(/not one/);
  });

  it('cannot be used for anything but reading the stream: no writes, no other reads, no new tickets', async () => {
    const t = await ticket();
    expect((await refusal(exposed(), `/api/v1/demo/runs?ticket=${t}`, { method: 'POST' }))?.status).toBe(401);
    expect((await refusal(exposed(), `/api/v1/stream?ticket=${t}`, { method: 'POST' }))?.status).toBe(401);
    expect((await refusal(exposed(), `/api/v1/snapshot?ticket=${t}`))?.status).toBe(401);
    expect((await refusal(exposed(), `/api/v1/stream/tickets?ticket=${t}`, { method: 'POST' }))?.status).toBe(401);
    const post = new Request(`${BASE}/api/v1/demo/runs`, {
      method: 'POST',
      headers: { host, origin: BASE, authorization: `Bearer ${t}` },
    });
    const limits = new MutationLimits({ perClient: 100, total: 1000 });
    expect(() => guardMutation(post, { token: TOKEN, limits })).toThrow(expect.objectContaining({ status: 401 }));
    const minted = await callHandler(rt, postStreamTicket, '/api/v1/stream/tickets', {
      method: 'POST',
      headers: { host, authorization: `Bearer ${t}` },
    });
    expect(minted.status).toBe(401);
    // Still good for what it is for.
    expect(processStreamTickets(TOKEN).check(t)).toBeUndefined();
  });
});

describe('stream caps', () => {
  it('refuse a client past its cap with a 429 naming the setting, and free the slot when a stream closes', async () => {
    const a1 = await open('/api/v1/stream?overview=1', '10.0.1.1');
    const a2 = await open('/api/v1/stream?overview=1', '10.0.1.1');
    expect([a1.status, a2.status]).toEqual([200, 200]);
    const a3 = await open('/api/v1/stream?overview=1', '10.0.1.1');
    expect(a3.status).toBe(429);
    expect(a3.body?.error).toMatchObject({
      code: 'TooManyStreams',
      message: expect.stringMatching(
        /10\.0\.1\.1 has 2 streams open.*REFWATCH_STREAMS_PER_CLIENT \/ --streams-per-client/,
      ),
    });
    // Another client is not held back by this one's streams...
    const b1 = await open('/api/v1/stream?overview=1', '10.0.1.2');
    expect(b1.status).toBe(200);
    // ...until the server's total is reached.
    const c1 = await open('/api/v1/stream?overview=1', '10.0.1.3');
    expect(c1.status).toBe(429);
    expect(c1.body?.error.message).toMatch(/3 streams open, the most it serves \(REFWATCH_STREAMS_TOTAL/);
    a1.close();
    const a4 = await open('/api/v1/stream?overview=1', '10.0.1.1');
    expect(a4.status).toBe(200);
    for (const s of [a2, a4, b1]) s.close();
  });

  it('leave a ticket unused when they refuse its stream, so it opens one once a slot is free', async () => {
    const held = [
      await open('/api/v1/stream?overview=1', '10.0.2.1'),
      await open('/api/v1/stream?overview=1', '10.0.2.1'),
    ];
    const t = await ticket();
    const path = `/api/v1/stream?overview=1&ticket=${encodeURIComponent(t)}`;
    expect((await open(path, '10.0.2.1')).status).toBe(429);
    held[0]!.close();
    const opened = await open(path, '10.0.2.1');
    expect(opened.status).toBe(200);
    opened.close();
    held[1]!.close();
  });
});
