import 'server-only';
import { readFile } from 'node:fs/promises';
import { Admission, generateAdmissionCertificate, startAdmissionServer, type AdmissionServer } from '../lib/admission';
import type { ChangeLog } from '../lib/changelog';
import type { InformerSource } from '../lib/engine';
import type { AdmissionConfig } from './config';
import type { Observer } from './observer';

/** AdmissionService is the runtime's admission check, and its webhook listener when one is configured. */
export interface AdmissionService {
  readonly admission: Admission;
  /** The webhook's URL, when --admission-listen is set. */
  readonly url?: string;
  stop(): Promise<void>;
}

let seq = 0;

/**
 * startAdmission checks objects against the runtime's shared caches: for the
 * embedded API server's Warning headers, and on the webhook listener of
 * --admission-listen. A warning that resolved itself within the grace is a
 * dashboard event.
 */
export async function startAdmission(deps: {
  source: InformerSource;
  observer: Observer;
  changelog: ChangeLog;
  config: AdmissionConfig | undefined;
}): Promise<AdmissionService> {
  const admission = new Admission({
    source: deps.source,
    // Read at each review: ReferenceRules objects change the observer's rules while the server runs.
    ruleSet: () => deps.observer.ruleSet,
    readiness: (kind) => deps.observer.readiness(kind),
    graceMs: deps.config?.graceMs ?? 30_000,
    onResolved: (e) => {
      const at = Date.now();
      const id = `adm-${at}-${++seq}`;
      deps.changelog.put('event', id, {
        id,
        at,
        type: 'AdmissionWarningResolved',
        key: e.referent,
        message: e.message,
      });
    },
    onError: (e) => console.error(`refwatch: admission check failed (answered allowed): ${String(e)}`),
  });
  await admission.prime();
  let server: AdmissionServer | undefined;
  const c = deps.config;
  if (c) {
    let tls: { cert: string; key: string };
    if (c.certFile && c.keyFile) {
      try {
        tls = { cert: await readFile(c.certFile, 'utf8'), key: await readFile(c.keyFile, 'utf8') };
      } catch (e) {
        await admission.stop();
        throw new Error(
          `REFWATCH_ADMISSION_TLS_CERT/KEY (flags --admission-tls-cert, --admission-tls-key): cannot read ${String(e)}`,
          { cause: e },
        );
      }
    } else {
      const generated = await generateAdmissionCertificate([c.host === '0.0.0.0' ? '127.0.0.1' : c.host, 'localhost']);
      tls = generated;
      console.log(
        `refwatch: admission webhook uses a generated certificate; its caBundle: ${Buffer.from(generated.ca).toString('base64')}`,
      );
    }
    server = await startAdmissionServer({
      host: c.host,
      port: c.port,
      ...tls,
      review: (body) => admission.review(body),
    });
    console.log(`refwatch: admission webhook at ${server.url}`);
  }
  return {
    admission,
    ...(server ? { url: server.url } : {}),
    async stop() {
      await server?.stop();
      await admission.stop();
    },
  };
}
