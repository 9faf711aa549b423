import { describe, expect, it } from 'vitest';
import type { AdmissionCheck } from '@/lib/embedded';
import { api, start } from './harness';

/*
 * The embedded API server runs its admission check on every write a client
 * makes (create, update, and merge, JSON and strategic merge patches), on the
 * object as it will be stored, and answers with its warnings as Warning
 * headers, as kube-apiserver relays a webhook's.
 */

const PODS = '/api/v1/namespaces/default/pods';

/** check warns about the Secret a Pod's first volume names, and records what it was asked. */
function recordingCheck() {
  const calls: { operation: string; object: Record<string, unknown> }[] = [];
  const check: AdmissionCheck = (operation, object) => {
    calls.push({ operation, object });
    const spec = object.spec as { volumes?: { secret?: { secretName?: string } }[] } | undefined;
    const secret = spec?.volumes?.[0]?.secret?.secretName;
    return secret ? [`spec.volumes[0].secret.secretName: Secret default/${secret} does not exist yet`] : [];
  };
  return { calls, check };
}

function pod(secret: string) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'worker' },
    spec: { containers: [{ name: 'c', image: 'x' }], volumes: [{ name: 'db', secret: { secretName: secret } }] },
  };
}

const warning = (secret: string) =>
  `299 - "spec.volumes[0].secret.secretName: Secret default/${secret} does not exist yet"`;

describe('embedded API server: admission warnings on every write', () => {
  it('warns on create and update with the object as stored, its namespace filled in', async () => {
    const server = await start();
    const { calls, check } = recordingCheck();
    server.setAdmission(check);
    const created = await api(server, 'POST', PODS, pod('db-pasword'));
    expect(created.status).toBe(201);
    expect(created.headers.get('warning')).toBe(warning('db-pasword'));
    expect(calls[0]!.operation).toBe('CREATE');
    expect((calls[0]!.object.metadata as { namespace?: string }).namespace).toBe('default');

    const updated = await api(server, 'PUT', `${PODS}/worker`, { ...pod('db-pass'), metadata: { name: 'worker' } });
    expect(updated.status).toBe(200);
    expect(updated.headers.get('warning')).toBe(warning('db-pass'));
    expect(calls[1]!.operation).toBe('UPDATE');
  });

  it.each([
    [
      'merge patch',
      'application/merge-patch+json',
      { spec: { volumes: [{ name: 'db', secret: { secretName: 'merged' } }] } },
      'merged',
    ],
    [
      'JSON patch',
      'application/json-patch+json',
      [{ op: 'replace', path: '/spec/volumes/0/secret/secretName', value: 'json-patched' }],
      'json-patched',
    ],
    [
      'strategic merge patch',
      'application/strategic-merge-patch+json',
      { spec: { volumes: [{ name: 'db', secret: { secretName: 'strategic' } }] } },
      'strategic',
    ],
  ])('warns on a %s, judging the patched object', async (_name, contentType, patch, secret) => {
    const server = await start();
    expect((await api(server, 'POST', PODS, pod('db-password'))).status).toBe(201);
    const { calls, check } = recordingCheck();
    server.setAdmission(check);
    const r = await api(server, 'PATCH', `${PODS}/worker`, patch, { 'content-type': contentType });
    expect(r.status).toBe(200);
    expect(r.body.spec.volumes[0].secret.secretName).toBe(secret);
    expect(r.headers.get('warning')).toBe(warning(secret));
    expect(calls.map((c) => c.operation)).toEqual(['UPDATE']);
    // The whole object, not the patch: what the webhook's AdmissionReview would carry.
    expect(calls[0]!.object).toMatchObject({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'worker' } });
  });

  it('checks no status write and no write of its own, and nothing once turned off', async () => {
    const server = await start({
      objects: [{ ...pod('at-start'), metadata: { name: 'early', namespace: 'default' } }],
    });
    const { calls, check } = recordingCheck();
    server.setAdmission(check);
    expect((await api(server, 'POST', PODS, pod('db-password'))).status).toBe(201);
    const status = await api(
      server,
      'PATCH',
      `${PODS}/worker/status`,
      { status: { phase: 'Running' } },
      { 'content-type': 'application/merge-patch+json' },
    );
    expect(status.status).toBe(200);
    expect(status.headers.get('warning')).toBeNull();
    expect(calls.map((c) => (c.object.metadata as { name: string }).name)).toEqual(['worker']);

    server.setAdmission(undefined);
    const r = await api(
      server,
      'PATCH',
      `${PODS}/worker`,
      { metadata: { labels: { a: 'b' } } },
      {
        'content-type': 'application/merge-patch+json',
      },
    );
    expect(r.status).toBe(200);
    expect(r.headers.get('warning')).toBeNull();
    expect(calls).toHaveLength(1);
  });
});
