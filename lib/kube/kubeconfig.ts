import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type * as Yaml from 'yaml';
import { RefwatchError } from '../model';
import type { ClusterConnection, Connection, ExecConfig, UserCredentials } from './credentials';

/*
 * The kubeconfig is checked by hand rather than with a zod schema: it is the
 * only schema a controller process needs at run time, and zod costs some
 * 12 MB of resident memory once loaded. Unknown fields pass, as in kubectl.
 */
interface KubeconfigCluster {
  server: string;
  'certificate-authority'?: string;
  'certificate-authority-data'?: string;
  'insecure-skip-tls-verify'?: boolean;
  'tls-server-name'?: string;
  'proxy-url'?: string;
}
interface KubeconfigUser {
  token?: string;
  tokenFile?: string;
  'token-file'?: string;
  'client-certificate'?: string;
  'client-certificate-data'?: string;
  'client-key'?: string;
  'client-key-data'?: string;
  username?: string;
  password?: string;
  as?: string;
  exec?: ExecConfig;
  'auth-provider'?: { name: string; config?: Record<string, unknown> };
}
export interface KubeconfigDoc {
  apiVersion?: string;
  kind?: string;
  clusters: { name: string; cluster: KubeconfigCluster }[];
  users: { name: string; user?: KubeconfigUser | null }[];
  contexts: { name: string; context: { cluster: string; user?: string; namespace?: string } }[];
  'current-context'?: string;
}

/** KubeconfigField is a field that failed its check, with what is wrong, in kubectl users' words. */
class KubeconfigField extends Error {
  constructor(
    readonly path: string,
    readonly problem: string,
  ) {
    super(`${path} ${problem}`);
  }
}

const kindOf = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
type Check = (v: unknown, at: string) => void;
const fail = (at: string, problem: string): never => {
  throw new KubeconfigField(at || '(root)', problem);
};
const typed =
  (type: 'string' | 'boolean' | 'object' | 'array'): Check =>
  (v, at) => {
    if (v === undefined) fail(at, 'is missing');
    if (kindOf(v) !== type) fail(at, `is invalid: expected ${type}, received ${kindOf(v)}`);
  };
const nonEmpty: Check = (v, at) => {
  typed('string')(v, at);
  if (v === '') fail(at, 'must not be empty');
};
const optional =
  (check: Check): Check =>
  (v, at) => {
    if (v !== undefined) check(v, at);
  };
const serverUrl: Check = (v, at) => {
  typed('string')(v, at);
  if (!/^https?:\/\/[^/\s]/.test(v as string) || !URL.canParse(v as string))
    fail(at, 'must be an http:// or https:// URL such as https://127.0.0.1:6443');
};
/** fields checks the listed fields of an object; others pass unchecked. */
const fields =
  (spec: Record<string, Check>): Check =>
  (v, at) => {
    typed('object')(v, at);
    for (const [k, check] of Object.entries(spec)) check((v as Record<string, unknown>)[k], at ? `${at}.${k}` : k);
  };
const list =
  (item: Check): Check =>
  (v, at) => {
    typed('array')(v, at);
    (v as unknown[]).forEach((x, i) => item(x, `${at}[${i}]`));
  };
const str = optional(typed('string'));
const checkKubeconfig = fields({
  apiVersion: str,
  kind: str,
  clusters: list(
    fields({
      name: nonEmpty,
      cluster: fields({
        server: serverUrl,
        'certificate-authority': str,
        'certificate-authority-data': str,
        'insecure-skip-tls-verify': optional(typed('boolean')),
        'tls-server-name': str,
        'proxy-url': str,
      }),
    }),
  ),
  users: optional(
    list(
      fields({
        name: nonEmpty,
        user: (v, at) => {
          if (v === undefined || v === null) return;
          fields({
            token: str,
            tokenFile: str,
            'token-file': str,
            'client-certificate': str,
            'client-certificate-data': str,
            'client-key': str,
            'client-key-data': str,
            username: str,
            password: str,
            as: str,
            exec: optional(
              fields({
                command: nonEmpty,
                args: optional(list(typed('string'))),
                env: optional(
                  (e, eat) => e !== null && list(fields({ name: nonEmpty, value: typed('string') }))(e, eat),
                ),
                apiVersion: str,
              }),
            ),
            'auth-provider': optional(fields({ name: nonEmpty, config: optional(typed('object')) })),
          })(v, at);
        },
      }),
    ),
  ),
  contexts: list(fields({ name: nonEmpty, context: fields({ cluster: nonEmpty, user: str, namespace: str }) })),
  'current-context': str,
});

function invalid(source: string, field: string, problem: string): RefwatchError {
  return new RefwatchError('InvalidKubeconfig', `kubeconfig ${source}: ${field} ${problem}`, { field });
}

/** parseKubeconfig validates a kubeconfig document; the error names the source and the field, never a value. */
export function parseKubeconfig(doc: unknown, source: string): KubeconfigDoc {
  try {
    checkKubeconfig(doc, '');
  } catch (e) {
    if (e instanceof KubeconfigField) throw invalid(source, e.path, e.problem);
    throw e;
  }
  const cfg = { ...(doc as KubeconfigDoc) };
  cfg.users ??= [];
  const clusters = cfg.clusters.map((c) => c.name);
  const users = cfg.users.map((u) => u.name);
  cfg.contexts.forEach((c, i) => {
    if (!clusters.includes(c.context.cluster)) {
      throw invalid(
        source,
        `contexts[${i}].context.cluster`,
        `names cluster "${c.context.cluster}", which is not in clusters (have: ${clusters.join(', ') || 'none'})`,
      );
    }
    if (c.context.user && !users.includes(c.context.user)) {
      throw invalid(
        source,
        `contexts[${i}].context.user`,
        `names user "${c.context.user}", which is not in users (have: ${users.join(', ') || 'none'})`,
      );
    }
  });
  return cfg;
}

/** secretsOf lists every credential string in a kubeconfig, for redaction. */
function secretsOf(cfg: KubeconfigDoc): string[] {
  const out: string[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === 'string') out.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') Object.values(v).forEach(walk);
  };
  for (const u of cfg.users) walk(u.user);
  // An exec plugin's command is no secret, and errors name it so that one can fix it.
  const commands = new Set(cfg.users.map((u) => u.user?.exec?.command));
  return out.filter((s) => !commands.has(s));
}

/*
 * yaml is loaded on the first kubeconfig file read, not with the kube client: it stays resident for the
 * process's life (its code and compiled functions, some 3-4 MB), and a controller in its cluster reads no
 * kubeconfig. The load is synchronous because fromFile is; Next's bundler (Turbopack) turns
 * createRequire(import.meta.url)('yaml') into a require of its own bundled copy, so the standalone dashboard
 * carries yaml too.
 */
let yamlModule: typeof Yaml | undefined;
function loadYaml(): typeof Yaml {
  return (yamlModule ??= createRequire(import.meta.url)('yaml') as typeof Yaml);
}

/** readKubeconfigFile reads a kubeconfig file (YAML or JSON); the error names the file, never a line of it. */
export function readKubeconfigFile(file: string): unknown {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new RefwatchError(
      'InvalidKubeconfig',
      `kubeconfig ${file} cannot be read (${code}): pass the path of a kubeconfig file`,
      { field: 'kubeconfig' },
    );
  }
  const yaml = loadYaml();
  let doc: unknown;
  try {
    doc = yaml.parse(text);
  } catch (e) {
    // The parser's own message quotes the offending line, which may hold a token: report the position only.
    const pos =
      e instanceof yaml.YAMLParseError && e.linePos ? ` at line ${e.linePos[0].line}, column ${e.linePos[0].col}` : '';
    throw new RefwatchError('InvalidKubeconfig', `kubeconfig ${file} is not valid YAML${pos}`, {
      field: 'kubeconfig',
    });
  }
  return doc;
}

/**
 * kubeconfigConnection picks a context of a kubeconfig and resolves its
 * cluster and user, with relative paths taken against baseDir.
 */
export function kubeconfigConnection(
  doc: unknown,
  opts: { context?: string; source?: string; baseDir?: string },
): Connection {
  const source = opts.source ?? '(object)';
  const cfg = parseKubeconfig(doc, source);
  const names = cfg.contexts.map((c) => c.name);
  const name = opts.context ?? cfg['current-context'];
  if (!name) {
    throw new RefwatchError(
      'UnknownContext',
      `kubeconfig ${source} has no current-context: choose a context (have: ${names.join(', ') || 'none'})`,
      { field: 'context' },
    );
  }
  if (!names.includes(name)) {
    throw new RefwatchError(
      'UnknownContext',
      `context "${name}" is not in kubeconfig ${source}: choose one of ${names.join(', ') || '(none defined)'}`,
      {
        field: opts.context ? 'context' : 'current-context',
      },
    );
  }
  // turbopackIgnore: a kubeconfig's own paths are runtime data; without it the build traces the whole project into the standalone output.
  const abs = (p: string | undefined) =>
    p && opts.baseDir && !path.isAbsolute(p) ? path.join(/*turbopackIgnore: true*/ opts.baseDir, p) : p;
  const ctx = cfg.contexts.find((c) => c.name === name)!.context;
  const c = cfg.clusters.find((x) => x.name === ctx.cluster)!;
  const cluster: ClusterConnection = {
    name: c.name,
    server: c.cluster.server.replace(/\/$/, ''),
    caData: c.cluster['certificate-authority-data'],
    caFile: abs(c.cluster['certificate-authority']),
    skipTLSVerify: c.cluster['insecure-skip-tls-verify'] === true,
    tlsServerName: c.cluster['tls-server-name'],
    proxyUrl: c.cluster['proxy-url'],
  };
  const secrets = secretsOf(cfg);
  const i = cfg.users.findIndex((u) => u.name === ctx.user);
  const x = cfg.users[i]?.user ?? {};
  const tokenFile = x.token ? undefined : abs(x['token-file'] ?? x.tokenFile);
  if (tokenFile) {
    // Read now so that a wrong path fails here, naming the field; requests read it again as it rotates.
    try {
      secrets.push(fs.readFileSync(tokenFile, 'utf8').trim());
    } catch {
      throw invalid(source, `users[${i}].user.token-file`, `cannot be read: ${tokenFile}`);
    }
  }
  const user: UserCredentials = {
    name: ctx.user ?? '',
    token: x.token,
    tokenFile,
    certData: x['client-certificate-data'],
    certFile: abs(x['client-certificate']),
    keyData: x['client-key-data'],
    keyFile: abs(x['client-key']),
    username: x.username,
    password: x.password,
    impersonate: x.as,
    exec: x.exec,
    authProvider: x['auth-provider'],
  };
  return { cluster, user, context: name, namespace: ctx.namespace, source, secrets };
}
