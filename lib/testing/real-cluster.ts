import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, openSync, closeSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { kubeconfigFor, kubeRequest, type KubeconfigFile, type KubeEndpoint } from './kube-http';

export const KUBE_VERSION = process.env.KUBE_VERSION ?? 'v1.35.4';
export const ETCD_VERSION = process.env.ETCD_VERSION ?? 'v3.5.35';

/**
 * RealClusterUnavailable means the binaries could not be found or provisioned (no Go,
 * build failed); test harnesses report it as a skipped tier, not as a test failure.
 */
export class RealClusterUnavailable extends Error {
  override name = 'RealClusterUnavailable';
}

export interface RealClusterOptions {
  /** Directory holding `etcd` and `kube-apiserver`; default: kubeAssetsDir(). */
  binDir?: string;
  /** How long to wait for /readyz; default 120 s. */
  readyTimeoutMs?: number;
  /** Flags added after the defaults (a later flag wins), e.g. --watch-cache=false. */
  apiserverFlags?: string[];
}

/** A kube-apiserver plus etcd on loopback, owned by this process. */
export interface RealCluster {
  url: string;
  /** Bearer token of `admin`, in group system:masters. */
  token: string;
  /** Bearer token of `restricted`, authenticated but bound to no role: provokes 403. */
  restrictedToken: string;
  /** PEM bundle that verifies the serving certificate. */
  ca: string;
  kubeconfigPath: string;
  kubeconfig: KubeconfigFile;
  restrictedKubeconfig: KubeconfigFile;
  /** kube-apiserver's gitVersion, e.g. v1.35.4. */
  version: string;
  /** etcd's client URL (plain HTTP on loopback), for what goes past kube-apiserver, such as a compaction. */
  etcdUrl: string;
  /** Directory with etcd.log and kube-apiserver.log; removed by stop(). */
  dir: string;
  /** Kills both processes (SIGTERM, SIGKILL after 5 s), awaits their exit, removes the temp dir. */
  stop(): Promise<void>;
  /** Stops and starts kube-apiserver only: same etcd, port, certificate and tokens. */
  restart(): Promise<void>;
  /** Stops and starts etcd only, on the same data dir and port; kube-apiserver keeps running and reconnects. */
  restartEtcd(): Promise<void>;
}

/** cachedBinariesDir is where refwatch's build script (tests/setup/build-real-cluster.sh) caches the binaries. */
export function cachedBinariesDir(): string {
  const cache = process.env.REFWATCH_CACHE ?? path.join(os.homedir(), '.cache', 'refwatch');
  return path.join(cache, 'real-cluster', `kube-${KUBE_VERSION}-etcd-${ETCD_VERSION}`);
}

/**
 * kubeAssetsDir returns the directory holding `kube-apiserver` and `etcd`: REFWATCH_KUBE_ASSETS when set
 * (as envtest's KUBEBUILDER_ASSETS), else the build script's cache. It throws RealClusterUnavailable,
 * saying how to get them, when a binary is missing.
 */
export function kubeAssetsDir(): string {
  const assets = process.env.REFWATCH_KUBE_ASSETS;
  const dir = assets || cachedBinariesDir();
  const missing = ['kube-apiserver', 'etcd'].filter((b) => !existsSync(path.join(dir, b)));
  if (missing.length === 0) return dir;
  const where = assets ? `REFWATCH_KUBE_ASSETS=${assets}` : `the cache ${dir}`;
  throw new RealClusterUnavailable(
    `${missing.join(' and ')} not found in ${where}. Build kube-apiserver ${KUBE_VERSION} and etcd ${ETCD_VERSION} ` +
      `from the Go module proxy with refwatch's script (needs Go >= 1.25): \`bash tests/setup/build-real-cluster.sh\` ` +
      `in a clone of refwatch, which caches them there; or set REFWATCH_KUBE_ASSETS to a directory holding both ` +
      `(envtest's, from \`setup-envtest use -p path\`, will do).`,
  );
}

export function hasBinaries(dir: string): boolean {
  return dir !== '' && existsSync(path.join(dir, 'etcd')) && existsSync(path.join(dir, 'kube-apiserver'));
}

export async function startRealCluster(opts: RealClusterOptions = {}): Promise<RealCluster> {
  const bin = opts.binDir ?? kubeAssetsDir();
  const readyTimeoutMs = opts.readyTimeoutMs ?? 120_000;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'refwatch-real-'));
  liveDirs.add(dir);
  const procs: Partial<Record<'etcd' | 'apiserver', Supervised>> = {};
  try {
    const [etcdClient, etcdPeer, apiPort] = await freePorts(3);
    const startEtcd = async (): Promise<void> => {
      procs.etcd = supervise(path.join(bin, 'etcd'), etcdArgs(dir, etcdClient!, etcdPeer!), path.join(dir, 'etcd.log'));
      await waitFor('etcd', procs.etcd, readyTimeoutMs, async () => {
        const res = await kubeRequest({ url: `http://127.0.0.1:${etcdClient}`, token: '' }, 'GET', '/health', {
          timeoutMs: 2000,
        });
        return res.status === 200 && res.body.includes('"health":"true"');
      });
    };
    await startEtcd();

    const token = randomBytes(24).toString('hex');
    const restrictedToken = randomBytes(24).toString('hex');
    writeFileSync(
      path.join(dir, 'tokens.csv'),
      `${token},admin,admin,"system:masters"\n${restrictedToken},restricted,restricted\n`,
      { mode: 0o600 },
    );
    writeServiceAccountKeys(dir);
    const url = `https://127.0.0.1:${apiPort}`;
    const apiArgs = [...apiserverArgs(dir, apiPort!, etcdClient!), ...(opts.apiserverFlags ?? [])];
    const startApiserver = async (): Promise<void> => {
      procs.apiserver = supervise(path.join(bin, 'kube-apiserver'), apiArgs, path.join(dir, 'kube-apiserver.log'));
      await waitFor('kube-apiserver', procs.apiserver, readyTimeoutMs, async () => {
        const res = await kubeRequest({ url, token }, 'GET', '/readyz', { insecure: true, timeoutMs: 5000 });
        return res.status === 200;
      });
    };
    await startApiserver();

    // The self-signed serving certificate is written to --cert-dir with its CA appended.
    const ca = readFileSync(path.join(dir, 'certs', 'apiserver.crt'), 'utf8');
    const endpoint: KubeEndpoint = { url, token, ca };
    const versionRes = await kubeRequest(endpoint, 'GET', '/version');
    if (versionRes.status !== 200) throw new Error(`GET /version returned ${versionRes.status}: ${versionRes.body}`);
    const version = (JSON.parse(versionRes.body) as { gitVersion: string }).gitVersion;

    const kubeconfig = kubeconfigFor(endpoint, 'refwatch-real');
    const restrictedKubeconfig = kubeconfigFor({ url, token: restrictedToken, ca }, 'refwatch-real', 'restricted');
    const kubeconfigPath = path.join(dir, 'kubeconfig.yaml');
    writeFileSync(kubeconfigPath, stringify(kubeconfig), { mode: 0o600 });

    let stopped: Promise<void> | undefined;
    return {
      url,
      token,
      restrictedToken,
      ca,
      kubeconfigPath,
      kubeconfig,
      restrictedKubeconfig,
      version,
      etcdUrl: `http://127.0.0.1:${etcdClient}`,
      dir,
      stop: () => (stopped ??= stopAll(procs, dir)),
      restart: async () => {
        if (stopped) throw new Error('restart() after stop(): start a new cluster instead');
        await procs.apiserver?.stop();
        await startApiserver();
      },
      restartEtcd: async () => {
        if (stopped) throw new Error('restartEtcd() after stop(): start a new cluster instead');
        await procs.etcd?.stop();
        await startEtcd();
      },
    };
  } catch (e) {
    await stopAll(procs, dir);
    throw e;
  }
}

function etcdArgs(dir: string, clientPort: number, peerPort: number): string[] {
  const client = `http://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  return [
    '--name=refwatch',
    `--data-dir=${path.join(dir, 'etcd')}`,
    `--listen-client-urls=${client}`,
    `--advertise-client-urls=${client}`,
    `--listen-peer-urls=${peer}`,
    `--initial-advertise-peer-urls=${peer}`,
    `--initial-cluster=refwatch=${peer}`,
    // A throwaway test store: durability costs seconds per test run on slow disks.
    '--unsafe-no-fsync',
    '--log-level=warn',
  ];
}

/**
 * The flags envtest passes, plus token authentication and RBAC so a test can be
 * refused for real. WatchList is on by default from 1.32, so no feature gate is set.
 */
function apiserverArgs(dir: string, port: number, etcdClientPort: number): string[] {
  return [
    '--bind-address=127.0.0.1',
    '--advertise-address=127.0.0.1',
    `--secure-port=${port}`,
    `--cert-dir=${path.join(dir, 'certs')}`,
    `--etcd-servers=http://127.0.0.1:${etcdClientPort}`,
    `--token-auth-file=${path.join(dir, 'tokens.csv')}`,
    '--authorization-mode=RBAC',
    `--service-account-key-file=${path.join(dir, 'sa.pub')}`,
    `--service-account-signing-key-file=${path.join(dir, 'sa.key')}`,
    '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
    '--service-cluster-ip-range=10.0.0.0/24',
    '--allow-privileged=true',
    '--disable-admission-plugins=ServiceAccount',
    // Nothing here serves pprof or needs kubernetes Service endpoints kept in sync.
    '--profiling=false',
    '--endpoint-reconciler-type=none',
  ];
}

function writeServiceAccountKeys(dir: string): void {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  writeFileSync(path.join(dir, 'sa.pub'), publicKey);
  writeFileSync(path.join(dir, 'sa.key'), privateKey, { mode: 0o600 });
}

/** A child process that is killed when this process exits, however it exits. */
interface Supervised {
  name: string;
  logPath: string;
  /** Resolves with a description of how the process ended. */
  exited: Promise<string>;
  hasExited(): boolean;
  stop(): Promise<void>;
}

const live = new Set<ChildProcess>();
const liveDirs = new Set<string>();
let exitHooksInstalled = false;

function installExitHooks(): void {
  if (exitHooksInstalled) return;
  exitHooksInstalled = true;
  const killAll = () => {
    for (const child of live) child.kill('SIGKILL');
    live.clear();
    for (const dir of liveDirs) rmSync(dir, { recursive: true, force: true });
    liveDirs.clear();
  };
  process.on('exit', killAll);
  // A signal's default action skips 'exit' handlers: kill the children, then
  // let the signal take its course unless someone else handles it.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const onSignal = () => {
      killAll();
      process.off(signal, onSignal);
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    };
    process.on(signal, onSignal);
  }
}

function supervise(binary: string, args: string[], logPath: string): Supervised {
  installExitHooks();
  const name = path.basename(binary);
  const log = openSync(logPath, 'a');
  const child = spawn(binary, args, { stdio: ['ignore', log, log] });
  closeSync(log);
  live.add(child);
  let done = false;
  const exited = new Promise<string>((resolve) => {
    child.once('error', (e) => {
      done = true;
      live.delete(child);
      resolve(`failed to start: ${e.message}`);
    });
    child.once('exit', (code, signal) => {
      done = true;
      live.delete(child);
      resolve(signal ? `killed by ${signal}` : `exited with code ${code}`);
    });
  });
  return {
    name,
    logPath,
    exited,
    hasExited: () => done,
    stop: async () => {
      if (done) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}

async function waitFor(
  what: string,
  proc: Supervised,
  timeoutMs: number,
  probe: () => Promise<boolean>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError = 'no answer yet';
  while (Date.now() < deadline) {
    if (proc.hasExited())
      throw new Error(`${what} ${await proc.exited} before it became ready${logTail(proc.logPath)}`);
    try {
      if (await probe()) return;
      lastError = 'not ready';
    } catch (e) {
      lastError = (e as Error).message;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${what} not ready after ${timeoutMs / 1000} s (${lastError})${logTail(proc.logPath)}`);
}

async function stopAll(procs: Partial<Record<'etcd' | 'apiserver', Supervised>>, dir: string): Promise<void> {
  // kube-apiserver first: it would otherwise spend its shutdown retrying a dead etcd.
  await procs.apiserver?.stop();
  await procs.etcd?.stop();
  rmSync(dir, { recursive: true, force: true });
  liveDirs.delete(dir);
}

/** logTail quotes the last 40 lines of a log, because the temp dir holding it is removed on failure. */
function logTail(logPath: string): string {
  if (!existsSync(logPath)) return '';
  const tail = readFileSync(logPath, 'utf8').trimEnd().split('\n').slice(-40).join('\n');
  return `; last 40 lines of ${path.basename(logPath)}:\n${tail}`;
}

/** freePorts asks the kernel for n distinct free loopback ports. */
async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<net.Server>((resolve, reject) => {
          const s = net.createServer();
          s.once('error', reject);
          s.listen(0, '127.0.0.1', () => resolve(s));
        }),
    ),
  );
  const ports = servers.map((s) => (s.address() as net.AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}
