import { request } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateAdmissionCertificate, startAdmissionServer, type AdmissionServer } from '@/lib/admission';

/** post sends body in the given parts, a moment apart, so that the server receives more than one chunk. */
function post(url: string, parts: string[]): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', rejectUnauthorized: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString()) }));
    });
    req.on('error', reject);
    const send = (i: number) => {
      if (i === parts.length - 1) return req.end(parts[i]);
      req.write(parts[i]);
      setTimeout(() => send(i + 1), 20);
    };
    send(0);
  });
}

describe('startAdmissionServer', () => {
  let server: AdmissionServer;
  const seen: unknown[] = [];
  beforeAll(async () => {
    const { cert, key } = await generateAdmissionCertificate(['127.0.0.1']);
    server = await startAdmissionServer({
      host: '127.0.0.1',
      port: 0,
      cert,
      key,
      review: (body) => {
        seen.push(body);
        const uid = (body as { request?: { uid?: string } } | undefined)?.request?.uid ?? '';
        return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid, allowed: true } };
      },
    });
  });
  afterAll(() => server.stop());

  it("reads a body that arrives in several chunks, at the path with kube-apiserver's ?timeout=", async () => {
    const body = JSON.stringify({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: { uid: 'u-7' },
    });
    const res = await post(`${server.url}?timeout=2s`, [body.slice(0, 20), body.slice(20, 50), body.slice(50)]);
    expect(res).toEqual({
      status: 200,
      body: { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: 'u-7', allowed: true } },
    });
    expect(seen.at(-1)).toEqual(JSON.parse(body));
  });

  it('answers a body that is not JSON with allowed: true', async () => {
    const res = await post(server.url, ['{"request": ']);
    expect(res.body).toEqual({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: '', allowed: true },
    });
    expect(seen.at(-1)).toBeUndefined();
  });
});
