import { X509Certificate, createPrivateKey } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { selfSignedCertificate } from '@/lib/tls/self-signed';

describe('selfSignedCertificate', () => {
  it('names DNS names and IP addresses apart, is its own CA, and its key signs it', async () => {
    const { cert, key } = await selfSignedCertificate('refwatch-test', ['127.0.0.1', '::1', 'localhost']);
    const x = new X509Certificate(cert);
    expect(x.subject).toBe('CN=refwatch-test');
    expect(x.subjectAltName).toBe('IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1, DNS:localhost');
    expect(x.ca).toBe(true);
    expect(x.checkIssued(x)).toBe(true);
    expect(x.checkPrivateKey(createPrivateKey(key))).toBe(true);
    expect(x.checkHost('localhost')).toBe('localhost');
    expect(x.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(x.checkHost('example.com')).toBeUndefined();
  });
});
