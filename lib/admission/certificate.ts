/** AdmissionCertificate is a serving certificate and the CA that signed it, in PEM: the CA goes in the caBundle. */
export interface AdmissionCertificate {
  ca: string;
  cert: string;
  key: string;
}

/**
 * generateAdmissionCertificate makes a self-signed serving certificate for
 * the webhook's names and addresses, valid one year; being its own CA, its
 * certificate is also the caBundle. Clusters that rotate certificates use
 * cert-manager instead (the chart's admission.certManager).
 */
export async function generateAdmissionCertificate(names: readonly string[]): Promise<AdmissionCertificate> {
  const { generate } = await import('selfsigned');
  const now = Date.now();
  const isIp = (n: string) => /^[\d.]+$/.test(n) || n.includes(':');
  const pems = await generate([{ name: 'commonName', value: names[0] ?? 'refwatch-admission' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notBeforeDate: new Date(now - 60_000),
    notAfterDate: new Date(now + 365 * 24 * 3600_000),
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', digitalSignature: true, keyCertSign: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: names.map((n) => (isIp(n) ? { type: 7 as const, ip: n } : { type: 2 as const, value: n })),
      },
    ],
  });
  return { ca: pems.cert, cert: pems.cert, key: pems.private };
}
