import { z } from 'zod';
import { RefwatchError, validateNamespace } from '../lib/model';
import { PACK_NAMES } from '../lib/rules/packs/names';
import { hostEntryProblem, isLoopback } from './http/hosts';
import { HISTORY_SETTINGS, historyEnvShape, parseHistoryConfig, type HistoryConfig } from './history/config';

/**
 * Config is refwatch's runtime configuration, parsed once from the
 * environment (scripts/start.mjs turns command-line flags into these
 * variables). Every error names the variable, its flag and the accepted values.
 */
export interface Config {
  cluster:
    | { mode: 'embedded' }
    | { mode: 'kubeconfig'; path: string; context?: string }
    | { mode: 'in-cluster'; root?: string };
  host: string;
  port: number;
  token?: string;
  /** Host names served besides loopback and the bound address; `*.example.com` matches names below it. */
  allowedHosts: string[];
  /** Reads (the API, the stream, /metrics) need the token: set when bound beyond loopback. */
  readsNeedToken: boolean;
  /** Bound beyond loopback without a token, on purpose (an authenticating proxy in front). */
  insecureAllowAnonymous: boolean;
  graceMs: number;
  stuckThresholdMs: number;
  rulesFiles: string[];
  /** The packs always on: the explicit --packs list, or core under auto. */
  rulePacks: string[];
  /** --packs auto: every other pack on while discovery serves its API group (lib/rules PackSwitch). */
  packsAuto?: boolean;
  demo: boolean;
  /** The directory of manifests loaded into the embedded cluster at start; undefined starts bare. */
  example?: string;
  /** Lines below this level are not logged (watches, relists, leadership). */
  logLevel?: 'debug' | 'info' | 'warn' | 'error' | 'silent';
  /** Watch only these namespaces (the Manager's `namespaces` option); undefined: all. */
  namespaces?: string[];
  /** Mutating requests per second per client (burst four times that); all clients together get ten times it. */
  mutationRate: number;
  /** Streams (GET /api/v1/stream) one client may hold open at once. */
  streamsPerClient: number;
  /** Streams the server holds open at once, of all clients. */
  streamsTotal: number;
  /** The admission webhook's HTTPS listener (docs/admission.md); undefined: no webhook. */
  admission?: AdmissionConfig;
  /** Where state transitions are kept across restarts (see server/history/config.ts); unset: nowhere. */
  history?: HistoryConfig;
}

export interface AdmissionConfig {
  host: string;
  port: number;
  /** PEM files; both unset: a self-signed certificate is generated at start. */
  certFile?: string;
  keyFile?: string;
  graceMs: number;
}

/** Each setting: its variable, its flag, and what it accepts. */
export const SETTINGS = {
  cluster: { env: 'REFWATCH_CLUSTER', flag: '--cluster', accepts: 'embedded | kubeconfig | in-cluster' },
  kubeconfig: { env: 'KUBECONFIG', flag: '--kubeconfig', accepts: 'a path to a kubeconfig file' },
  context: { env: 'REFWATCH_CONTEXT', flag: '--context', accepts: 'a context name from the kubeconfig' },
  host: { env: 'REFWATCH_HOST', flag: '--host', accepts: 'an address to bind, e.g. 127.0.0.1' },
  port: { env: 'REFWATCH_PORT', flag: '--port', accepts: 'a port number 1-65535' },
  token: { env: 'REFWATCH_TOKEN', flag: '--token', accepts: 'a bearer token of at least 16 characters' },
  allowedHosts: {
    env: 'REFWATCH_ALLOWED_HOSTS',
    flag: '--allowed-hosts',
    accepts: 'comma-separated host names or IP addresses without ports, e.g. refwatch.example.com,*.internal.example',
  },
  insecureAllowAnonymous: {
    env: 'REFWATCH_INSECURE_ALLOW_ANONYMOUS',
    flag: '--insecure-allow-anonymous',
    accepts: 'true | false (a bare flag means true); only without a token, behind a proxy that authenticates',
  },
  grace: { env: 'REFWATCH_GRACE', flag: '--grace', accepts: 'a duration such as 30s, 2m or 500ms' },
  stuckThreshold: {
    env: 'REFWATCH_STUCK_THRESHOLD',
    flag: '--stuck-threshold',
    accepts: 'a duration such as 30s or 5m',
  },
  rules: { env: 'REFWATCH_RULES', flag: '--rules', accepts: 'comma-separated rules files (YAML or JSON)' },
  packs: {
    env: 'REFWATCH_RULE_PACKS',
    flag: '--packs',
    accepts: `auto (the default), or comma-separated packs: ${PACK_NAMES.join(', ')}, or none`,
  },
  demo: { env: 'REFWATCH_DEMO', flag: '--demo', accepts: 'on | off' },
  namespaces: {
    env: 'REFWATCH_NAMESPACES',
    flag: '--namespaces',
    accepts: 'comma-separated namespace names, e.g. shop,web (default: all namespaces)',
  },
  example: {
    env: 'REFWATCH_EXAMPLE',
    flag: '--example',
    accepts: 'none, or a directory of manifests for the embedded cluster (default deploy/example)',
  },
  logLevel: { env: 'REFWATCH_LOG_LEVEL', flag: '--log-level', accepts: 'debug | info | warn | error | silent' },
  mutationRate: {
    env: 'REFWATCH_MUTATION_RATE',
    flag: '--mutation-rate',
    accepts: 'changes per second per client, a number from 0.1 to 10000 (default 5)',
  },
  streamsPerClient: {
    env: 'REFWATCH_STREAMS_PER_CLIENT',
    flag: '--streams-per-client',
    accepts: 'open streams per client, a whole number from 1 to 100000 (default 16)',
  },
  streamsTotal: {
    env: 'REFWATCH_STREAMS_TOTAL',
    flag: '--streams-total',
    accepts: 'open streams of all clients, a whole number from 1 to 100000 (default 256)',
  },
  admissionListen: {
    env: 'REFWATCH_ADMISSION_LISTEN',
    flag: '--admission-listen',
    accepts: "host:port for the admission webhook's HTTPS listener, e.g. 0.0.0.0:8443 (default: no webhook)",
  },
  admissionTlsCert: {
    env: 'REFWATCH_ADMISSION_TLS_CERT',
    flag: '--admission-tls-cert',
    accepts: 'a PEM certificate file for the webhook, with --admission-tls-key',
  },
  admissionTlsKey: {
    env: 'REFWATCH_ADMISSION_TLS_KEY',
    flag: '--admission-tls-key',
    accepts: 'a PEM private key file for the webhook, with --admission-tls-cert',
  },
  admissionGrace: {
    env: 'REFWATCH_ADMISSION_GRACE',
    flag: '--admission-grace',
    accepts: 'a duration such as 30s (default 30s): how long a warned, missing referent may take to appear',
  },
  ...HISTORY_SETTINGS,
} as const;

const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/;

/** parseDurationMs reads 250ms, 30s, 5m, 1h, or bare milliseconds. */
export function parseDurationMs(text: string, field: string): number {
  const m = DURATION.exec(text.trim());
  if (!m)
    throw new RefwatchError(
      'InvalidDuration',
      `${field} "${text}" is not a duration: use a number with ms, s, m or h`,
      { field, example: '30s' },
    );
  const n = Number(m[1]);
  const unit = m[2] ?? 'ms';
  return Math.round(n * (unit === 'ms' ? 1 : unit === 's' ? 1000 : unit === 'm' ? 60_000 : 3_600_000));
}

const KNOWN_PACKS: readonly string[] = PACK_NAMES;

const envSchema = z.object({
  REFWATCH_CLUSTER: z.enum(['embedded', 'kubeconfig', 'in-cluster']).optional(),
  KUBECONFIG: z.string().min(1).optional(),
  REFWATCH_CONTEXT: z.string().min(1).optional(),
  // Test and debug override: the folder standing in for / when reading the service account's token, CA and namespace.
  REFWATCH_IN_CLUSTER_ROOT: z.string().min(1).optional(),
  REFWATCH_HOST: z.string().min(1).default('127.0.0.1'),
  REFWATCH_PORT: z.coerce.number().int().min(1).max(65535).default(3000),
  REFWATCH_TOKEN: z.string().min(16).optional(),
  REFWATCH_ALLOWED_HOSTS: z.string().default(''),
  REFWATCH_INSECURE_ALLOW_ANONYMOUS: z.enum(['true', 'false']).default('false'),
  REFWATCH_GRACE: z.string().default('30s'),
  REFWATCH_STUCK_THRESHOLD: z.string().default('30s'),
  REFWATCH_RULES: z.string().default(''),
  REFWATCH_RULE_PACKS: z.string().default('auto'),
  REFWATCH_DEMO: z.enum(['on', 'off']).optional(),
  REFWATCH_EXAMPLE: z.string().optional(),
  REFWATCH_LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
  REFWATCH_NAMESPACES: z.string().optional(),
  REFWATCH_MUTATION_RATE: z.coerce.number().min(0.1).max(10_000).default(5),
  REFWATCH_STREAMS_PER_CLIENT: z.coerce.number().int().min(1).max(100_000).default(16),
  REFWATCH_STREAMS_TOTAL: z.coerce.number().int().min(1).max(100_000).default(256),
  REFWATCH_ADMISSION_LISTEN: z.string().optional(),
  REFWATCH_ADMISSION_TLS_CERT: z.string().optional(),
  REFWATCH_ADMISSION_TLS_KEY: z.string().optional(),
  REFWATCH_ADMISSION_GRACE: z.string().default('30s'),
  ...historyEnvShape,
});

const byEnv = new Map<string, (typeof SETTINGS)[keyof typeof SETTINGS]>(Object.values(SETTINGS).map((s) => [s.env, s]));

function configError(env: string, message: string): RefwatchError {
  const s = byEnv.get(env);
  const where = s ? `${s.env} (flag ${s.flag})` : env;
  return new RefwatchError('InvalidConfig', `${where}: ${message}; accepted: ${s?.accepts ?? 'see README'}`, {
    field: env,
  });
}

/**
 * standaloneBind is the address the standalone server (node server.js) binds,
 * which it reads from HOSTNAME (default 0.0.0.0), not from REFWATCH_HOST;
 * undefined under `npm start`, which binds REFWATCH_HOST. Access rules must
 * follow the real bind, so refwatch takes it from there.
 */
function standaloneBind(env: Record<string, string | undefined>): string | undefined {
  return env.__NEXT_PRIVATE_STANDALONE_CONFIG === undefined ? undefined : env.HOSTNAME || '0.0.0.0';
}

/** parseConfig validates the environment; it throws a RefwatchError naming the variable and flag at fault. */
export function parseConfig(env: Record<string, string | undefined> = process.env): Config {
  const raw: Record<string, string> = {};
  for (const key of Object.keys(envSchema.shape)) {
    const v = env[key];
    if (v !== undefined && v !== '') raw[key] = v;
  }
  const parsed = envSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const key = String(issue.path[0]);
    // The token is a secret: its length says what is wrong without repeating it.
    const given = key === 'REFWATCH_TOKEN' ? `the token (${raw[key]?.length ?? 0} characters)` : `"${raw[key] ?? ''}"`;
    throw configError(key, `${given} is not valid (${issue.message})`);
  }
  const e = parsed.data;
  const bind = standaloneBind(env);
  if (bind !== undefined) {
    if (raw.REFWATCH_HOST !== undefined && raw.REFWATCH_HOST !== bind) {
      throw configError(
        'REFWATCH_HOST',
        `"${raw.REFWATCH_HOST}" differs from HOSTNAME "${bind}", the address the standalone server (node server.js) binds; set both to the same address`,
      );
    }
    e.REFWATCH_HOST = bind;
  }
  const mode =
    e.REFWATCH_CLUSTER ?? (env.REFWATCH_CLUSTER === undefined && e.REFWATCH_CONTEXT ? 'kubeconfig' : 'embedded');
  let cluster: Config['cluster'];
  if (mode === 'kubeconfig') {
    const path = e.KUBECONFIG ?? (env.HOME ? `${env.HOME}/.kube/config` : undefined);
    if (!path) throw configError('KUBECONFIG', 'no kubeconfig path and no HOME to find ~/.kube/config');
    cluster = { mode, path: path.split(':')[0]!, ...(e.REFWATCH_CONTEXT ? { context: e.REFWATCH_CONTEXT } : {}) };
  } else if (mode === 'in-cluster') {
    cluster = { mode, ...(e.REFWATCH_IN_CLUSTER_ROOT ? { root: e.REFWATCH_IN_CLUSTER_ROOT } : {}) };
  } else {
    cluster = { mode: 'embedded' };
  }
  const packsAuto = e.REFWATCH_RULE_PACKS.trim() === 'auto';
  const packs =
    e.REFWATCH_RULE_PACKS === 'none'
      ? []
      : packsAuto
        ? ['core']
        : e.REFWATCH_RULE_PACKS.split(',')
            .map((p) => p.trim())
            .filter(Boolean);
  for (const p of packs) if (!KNOWN_PACKS.includes(p)) throw configError('REFWATCH_RULE_PACKS', `unknown pack "${p}"`);
  const wrap = (key: string, fn: () => number) => {
    try {
      return fn();
    } catch (err) {
      throw configError(key, (err as Error).message);
    }
  };
  const cfg: Config = {
    cluster,
    host: e.REFWATCH_HOST,
    port: e.REFWATCH_PORT,
    graceMs: wrap('REFWATCH_GRACE', () => parseDurationMs(e.REFWATCH_GRACE, 'REFWATCH_GRACE')),
    stuckThresholdMs: wrap('REFWATCH_STUCK_THRESHOLD', () =>
      parseDurationMs(e.REFWATCH_STUCK_THRESHOLD, 'REFWATCH_STUCK_THRESHOLD'),
    ),
    rulesFiles: e.REFWATCH_RULES.split(',')
      .map((f) => f.trim())
      .filter(Boolean),
    rulePacks: packs,
    packsAuto,
    demo: (e.REFWATCH_DEMO ?? (cluster.mode === 'embedded' ? 'on' : 'off')) === 'on',
    logLevel: e.REFWATCH_LOG_LEVEL,
    mutationRate: e.REFWATCH_MUTATION_RATE,
    streamsPerClient: e.REFWATCH_STREAMS_PER_CLIENT,
    streamsTotal: e.REFWATCH_STREAMS_TOTAL,
    history: parseHistoryConfig(e, configError),
    ...accessSettings(e),
  };
  if (e.REFWATCH_TOKEN) cfg.token = e.REFWATCH_TOKEN;
  if (e.REFWATCH_NAMESPACES !== undefined) cfg.namespaces = namespaceList(e.REFWATCH_NAMESPACES);
  // refwatch writes to a real cluster only when asked through the API: the example is the user's to apply there.
  const example = e.REFWATCH_EXAMPLE ?? (cluster.mode === 'embedded' ? 'deploy/example' : 'none');
  if (example !== 'none' && cluster.mode !== 'embedded')
    throw configError(
      'REFWATCH_EXAMPLE',
      `the example loads into the embedded cluster only; on ${cluster.mode} apply it yourself: kubectl apply -f deploy/demo/crds.yaml && kubectl apply -f ${example}`,
    );
  if (example !== 'none') cfg.example = example;
  const admission = admissionSettings(e, wrap);
  if (admission) cfg.admission = admission;
  return cfg;
}

const LISTEN = /^(\[[0-9a-fA-F:]+\]|[^:\s]*):(\d{1,5})$/;

/** admissionSettings reads the webhook's listener and TLS files; the files go together. */
function admissionSettings(
  e: z.infer<typeof envSchema>,
  wrap: (key: string, fn: () => number) => number,
): AdmissionConfig | undefined {
  const cert = e.REFWATCH_ADMISSION_TLS_CERT;
  const key = e.REFWATCH_ADMISSION_TLS_KEY;
  if (e.REFWATCH_ADMISSION_LISTEN === undefined) {
    if (cert !== undefined || key !== undefined)
      throw configError(
        cert !== undefined ? 'REFWATCH_ADMISSION_TLS_CERT' : 'REFWATCH_ADMISSION_TLS_KEY',
        'is set but the webhook is off; add --admission-listen 0.0.0.0:8443 to serve it',
      );
    return undefined;
  }
  const m = LISTEN.exec(e.REFWATCH_ADMISSION_LISTEN.trim());
  const port = m ? Number(m[2]) : NaN;
  if (!m || port < 1 || port > 65535)
    throw configError('REFWATCH_ADMISSION_LISTEN', `"${e.REFWATCH_ADMISSION_LISTEN}" is not host:port`);
  if ((cert === undefined) !== (key === undefined))
    throw configError(
      cert === undefined ? 'REFWATCH_ADMISSION_TLS_CERT' : 'REFWATCH_ADMISSION_TLS_KEY',
      'is missing: give both --admission-tls-cert and --admission-tls-key, or neither for a generated certificate',
    );
  return {
    host: m[1]!.replace(/^\[|\]$/g, '') || '0.0.0.0',
    port,
    ...(cert !== undefined && key !== undefined ? { certFile: cert, keyFile: key } : {}),
    graceMs: wrap('REFWATCH_ADMISSION_GRACE', () =>
      parseDurationMs(e.REFWATCH_ADMISSION_GRACE, 'REFWATCH_ADMISSION_GRACE'),
    ),
  };
}

/** namespaceList reads REFWATCH_NAMESPACES: namespace names, comma-separated, at least one. */
function namespaceList(text: string): string[] {
  const names = text
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  if (names.length === 0)
    throw configError('REFWATCH_NAMESPACES', `"${text}" names no namespace; leave it unset to watch all namespaces`);
  for (const name of names) {
    const v = validateNamespace(name, 'namespace');
    if (!v.ok) throw configError('REFWATCH_NAMESPACES', v.error.message.replace(/ \(example: .*\)$/, ''));
  }
  return [...new Set(names)];
}

/**
 * accessSettings checks the serving settings together. Bound to loopback,
 * reads are open and a token, if set, guards changes. Bound beyond loopback,
 * a token is required and then guards reads too, unless
 * --insecure-allow-anonymous says an authenticating proxy does that job; the
 * flag together with a token is refused as contradictory, since it would
 * quietly leave reads open while a token seems to protect them.
 */
function accessSettings(
  e: z.infer<typeof envSchema>,
): Pick<Config, 'allowedHosts' | 'readsNeedToken' | 'insecureAllowAnonymous'> {
  const allowedHosts = e.REFWATCH_ALLOWED_HOSTS.split(',')
    .map((h) => h.trim())
    .filter(Boolean);
  for (const entry of allowedHosts) {
    const problem = hostEntryProblem(entry);
    if (problem) throw configError('REFWATCH_ALLOWED_HOSTS', problem);
  }
  if (e.REFWATCH_HOST.startsWith('*') || hostEntryProblem(e.REFWATCH_HOST)) {
    throw configError('REFWATCH_HOST', `"${e.REFWATCH_HOST}" is not an address or host name`);
  }
  const insecure = e.REFWATCH_INSECURE_ALLOW_ANONYMOUS === 'true';
  const token = e.REFWATCH_TOKEN !== undefined;
  const anon = SETTINGS.insecureAllowAnonymous;
  if (insecure && token) {
    throw configError(
      'REFWATCH_INSECURE_ALLOW_ANONYMOUS',
      `contradicts REFWATCH_TOKEN (flag --token): with a token, reads need it; drop ${anon.flag} to require the token, or drop the token if a proxy in front authenticates`,
    );
  }
  const exposed = !isLoopback(e.REFWATCH_HOST);
  if (exposed && !token && !insecure) {
    throw new RefwatchError(
      'InvalidConfig',
      `REFWATCH_HOST (flag --host) ${e.REFWATCH_HOST} is reachable beyond this machine, so refwatch needs a token: set REFWATCH_TOKEN (flag --token) to 16 or more random characters, ` +
        `or, only behind a proxy that authenticates users, set ${anon.env}=true (flag ${anon.flag})`,
      { field: 'REFWATCH_TOKEN' },
    );
  }
  return { allowedHosts, readsNeedToken: exposed && token, insecureAllowAnonymous: exposed && insecure };
}

/** Flags that stand alone (`--insecure-allow-anonymous`); `--flag=false` still sets them explicitly. */
const BOOLEAN_FLAGS = new Set<string>([SETTINGS.insecureAllowAnonymous.flag]);

/** flagsToEnv maps command-line flags (`--context prod`, `--port=3001`) to the variables parseConfig reads. */
export function flagsToEnv(argv: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  const byFlag = new Map<string, string>(Object.values(SETTINGS).map((s) => [s.flag, s.env]));
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--'))
      throw new RefwatchError(
        'InvalidFlag',
        `unexpected argument "${arg}"; flags are ${[...byFlag.keys()].join(', ')}`,
        { field: arg },
      );
    const eq = arg.indexOf('=');
    const flag = eq < 0 ? arg : arg.slice(0, eq);
    const env = byFlag.get(flag);
    if (!env)
      throw new RefwatchError('InvalidFlag', `unknown flag ${flag}; flags are ${[...byFlag.keys()].join(', ')}`, {
        field: flag,
      });
    const bare = eq < 0 && BOOLEAN_FLAGS.has(flag);
    const value = bare ? 'true' : eq < 0 ? argv[++i] : arg.slice(eq + 1);
    if (value === undefined)
      throw new RefwatchError('InvalidFlag', `flag ${flag} needs a value: ${byEnv.get(env)?.accepts}`, { field: flag });
    out[env] = value;
  }
  if (out.KUBECONFIG && !out.REFWATCH_CLUSTER) out.REFWATCH_CLUSTER = 'kubeconfig';
  if (out.REFWATCH_CONTEXT && !out.REFWATCH_CLUSTER) out.REFWATCH_CLUSTER = 'kubeconfig';
  return out;
}
