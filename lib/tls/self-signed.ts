/** A serving certificate that is its own CA, in PEM: its certificate is also what a client trusts. */
export interface SelfSignedCertificate {
  cert: string;
  key: string;
}

/**
 * selfSignedCertificate makes a serving certificate for names (DNS names or
 * IP addresses) that is its own CA: EC P-256, valid one year, from a minute
 * ago so that a client whose clock is slightly behind accepts it.
 */
export async function selfSignedCertificate(
  commonName: string,
  names: readonly string[],
): Promise<SelfSignedCertificate> {
  // Loaded on first use: only processes that serve TLS pay for it.
  const { generate } = await import('selfsigned');
  const now = Date.now();
  const isIp = (n: string) => /^[\d.]+$/.test(n) || n.includes(':');
  const pems = await generate([{ name: 'commonName', value: commonName }], {
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
  return { cert: pems.cert, key: pems.private };
}
