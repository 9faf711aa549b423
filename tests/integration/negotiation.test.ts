import http from 'node:http';
import https from 'node:https';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startEmbeddedServer, type EmbeddedServer } from '@/lib/embedded';
import { getTestCluster, type TestCluster } from '../setup/cluster';

/*
 * Output content negotiation, probed with the same Accept headers on the
 * cluster under test and, on the real tier, on an embedded server beside it:
 * both must give the answers below, which are kube-apiserver 1.35's.
 */

const clusterKind = inject('refwatchCluster').kind;
const LIST = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1';
const ONE = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1';
const ONLY = 'only the following media types are accepted: application/json';
const REFUSED = '406: Not Acceptable\n\nAvailable representations: application/json';

interface Target {
  name: string;
  url: string;
  token: string;
  ca?: string;
}

interface Answer {
  status: number;
  body: string;
  ended: boolean;
}

/** send makes one request and keeps what came within ms (a watch is cut there; `ended` says whether the server ended it). */
function send(
  t: Target,
  method: string,
  path: string,
  accept: string,
  opts: { body?: unknown; ms?: number } = {},
): Promise<Answer> {
  const url = new URL(path, t.url);
  const headers: Record<string, string> = { authorization: `Bearer ${t.token}`, accept };
  const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
  if (payload) headers['content-type'] = 'application/json';
  const mod = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = mod.request(url, { method, headers, agent: false, ...(t.ca ? { ca: t.ca } : {}) }, (res) => {
      let body = '';
      let ended = false;
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      const done = () => resolve({ status: res.statusCode ?? 0, body, ended });
      const timer = setTimeout(() => {
        res.destroy();
        done();
      }, opts.ms ?? 5_000);
      res.on('end', () => {
        ended = true;
        clearTimeout(timer);
        done();
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** summary keeps what both servers must agree on: codes, kinds, reasons, messages (up to the media types listed), no data. */
function summary(a: Answer, watch = false): Record<string, unknown> {
  const lines = a.body.trim() === '' ? [] : a.body.trim().split('\n');
  if (watch) {
    const events = lines.map(
      (l) =>
        JSON.parse(l) as {
          type: string;
          object: {
            kind: string;
            apiVersion: string;
            data?: unknown;
            metadata: { annotations?: Record<string, string> };
          };
        },
    );
    return {
      status: a.status,
      ended: a.ended,
      events: events.map(
        (e) =>
          `${e.type} ${e.object.apiVersion} ${e.object.kind}${e.object.metadata.annotations?.['k8s.io/initial-events-end'] ? ' initial-events-end' : ''}${e.object.data ? ' +data' : ''}`,
      ),
    };
  }
  const b = JSON.parse(a.body) as Record<string, unknown> & {
    items?: { kind?: string; data?: unknown }[];
    message?: string;
  };
  const out: Record<string, unknown> = { status: a.status, kind: b.kind, apiVersion: b.apiVersion };
  if (b.kind === 'Status') {
    out.reason = b.reason;
    out.message = b.message?.startsWith(ONLY) ? ONLY : b.message?.startsWith(REFUSED) ? REFUSED : b.message;
    out.details = b.details;
  }
  if (b.items) out.items = b.items.map((i) => `${i.kind ?? '(typed)'}${i.data ? ' +data' : ''}`);
  if ('data' in b) out.data = true;
  return out;
}

const status406 = (message: string, details?: object) => ({
  status: 406,
  kind: 'Status',
  apiVersion: 'v1',
  reason: 'NotAcceptable',
  message,
  details,
});

let cluster: TestCluster;
let embedded: EmbeddedServer | undefined;
const targets: Target[] = [];
const NS = `negotiation-${Date.now().toString(36)}`;
const secrets = `/api/v1/namespaces/${NS}/secrets`;

beforeAll(async () => {
  cluster = await getTestCluster();
  const ca = cluster.kubeconfig.clusters[0]!.cluster['certificate-authority-data'];
  targets.push({
    name: clusterKind,
    url: cluster.url,
    token: cluster.token,
    ...(ca ? { ca: Buffer.from(ca, 'base64').toString('utf8') } : {}),
  });
  if (clusterKind === 'real') {
    embedded = await startEmbeddedServer({ token: 'probe' });
    targets.push({ name: 'embedded beside real', url: embedded.url, token: 'probe' });
  }
  for (const t of targets) {
    expect(
      (await send(t, 'POST', '/api/v1/namespaces', 'application/json', { body: { metadata: { name: NS } } })).status,
    ).toBe(201);
    const s1 = { metadata: { name: 's1', labels: { a: 'b' } }, data: { k: Buffer.from('secret').toString('base64') } };
    expect((await send(t, 'POST', secrets, 'application/json', { body: s1 })).status).toBe(201);
  }
});
afterAll(async () => {
  await embedded?.stop();
});

const cases: [string, string, string, Record<string, unknown>][] = [
  [
    'a metadata list',
    secrets,
    LIST,
    { status: 200, kind: 'PartialObjectMetadataList', apiVersion: 'meta.k8s.io/v1', items: ['PartialObjectMetadata'] },
  ],
  [
    'a metadata list in v1beta1',
    secrets,
    LIST.replace('v=v1', 'v=v1beta1'),
    {
      status: 200,
      kind: 'PartialObjectMetadataList',
      apiVersion: 'meta.k8s.io/v1beta1',
      items: ['PartialObjectMetadata'],
    },
  ],
  [
    'a metadata list from */*',
    secrets,
    LIST.replace('application/json', '*/*'),
    { status: 200, kind: 'PartialObjectMetadataList', apiVersion: 'meta.k8s.io/v1', items: ['PartialObjectMetadata'] },
  ],
  [
    'one object as metadata',
    `${secrets}/s1`,
    ONE,
    { status: 200, kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1' },
  ],
  [
    'a list as one PartialObjectMetadata',
    secrets,
    ONE,
    status406('you requested PartialObjectMetadata, but the requested object is a list (*core.SecretList)'),
  ],
  [
    'one object as a PartialObjectMetadataList',
    `${secrets}/s1`,
    LIST,
    status406('you requested PartialObjectMetadataList, but the requested object is not a list (*core.Secret)'),
  ],
  ['an unknown meta version', secrets, LIST.replace('v=v1', 'v=v2'), status406(ONLY)],
  ['a conversion outside meta.k8s.io', secrets, LIST.replace('g=meta.k8s.io', 'g=apps'), status406(ONLY)],
  ['a conversion without group and version', secrets, 'application/json;as=PartialObjectMetadataList', status406(ONLY)],
  ['an unknown conversion', secrets, 'application/json;as=Foo;g=meta.k8s.io;v=v1', status406(ONLY)],
  [
    'an unknown conversion, then plain JSON',
    secrets,
    'application/json;as=Foo;g=meta.k8s.io;v=v1,application/json',
    { status: 200, kind: 'SecretList', apiVersion: 'v1', items: ['(typed) +data'] },
  ],
  [
    'metadata less preferred than plain JSON',
    secrets,
    `${LIST};q=0.5,application/json;q=0.9`,
    { status: 200, kind: 'SecretList', apiVersion: 'v1', items: ['(typed) +data'] },
  ],
  ['a media type no route produces', secrets, 'text/html', status406(REFUSED, {})],
  ['a media type no route produces, for a missing object', `${secrets}/nope`, 'text/html', status406(REFUSED, {})],
  [
    'metadata of a missing object',
    `${secrets}/nope`,
    ONE,
    {
      status: 404,
      kind: 'Status',
      apiVersion: 'v1',
      reason: 'NotFound',
      message: 'secrets "nope" not found',
      details: { name: 'nope', kind: 'secrets' },
    },
  ],
];

describe(`output negotiation (${clusterKind} cluster${clusterKind === 'real' ? ' and an embedded server beside it' : ''})`, () => {
  it.each(cases)('answers %s like kube-apiserver', async (_what, path, accept, want) => {
    for (const t of targets)
      expect({ on: t.name, ...summary(await send(t, 'GET', path, accept)) }).toEqual({ on: t.name, ...want });
  });

  it('answers a create with the object as metadata', async () => {
    for (const t of targets) {
      const a = await send(t, 'POST', secrets, ONE, { body: { metadata: { name: 'created' }, data: { k: 'eA==' } } });
      expect({ on: t.name, ...summary(a) }).toEqual({
        on: t.name,
        status: 201,
        kind: 'PartialObjectMetadata',
        apiVersion: 'meta.k8s.io/v1',
      });
    }
  });

  it('streams a WatchList as PartialObjectMetadata, bookmarks included', async () => {
    const q = '?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true';
    for (const t of targets) {
      const s = await send(t, 'GET', `${secrets}${q}`, ONE, { ms: 1500 });
      const events = (summary(s, true).events as string[]).filter(
        (e) => !e.startsWith('BOOKMARK') || e.endsWith('initial-events-end'),
      );
      expect({ on: t.name, events }).toEqual({
        on: t.name,
        events: [
          'ADDED meta.k8s.io/v1 PartialObjectMetadata',
          'ADDED meta.k8s.io/v1 PartialObjectMetadata',
          'BOOKMARK meta.k8s.io/v1 PartialObjectMetadata initial-events-end',
        ],
      });
    }
  });

  it('ends a watch asked for PartialObjectMetadataList without an event', async () => {
    for (const t of targets) {
      const a = await send(
        t,
        'GET',
        `${secrets}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`,
        LIST,
        { ms: 4000 },
      );
      expect({ on: t.name, ...summary(a, true) }).toEqual({ on: t.name, status: 200, ended: true, events: [] });
    }
  });
});
