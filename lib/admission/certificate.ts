import { selfSignedCertificate } from '../tls/self-signed';

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
  const { cert, key } = await selfSignedCertificate(names[0] ?? 'refwatch-admission', names);
  return { ca: cert, cert, key };
}
