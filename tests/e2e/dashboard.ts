import { expect, type APIRequestContext, type Page } from '@playwright/test';
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';

export const SCREENS = 'test-results/screens';

/** The run settings of POST /api/v1/demo/runs (docs/api.md, "Demo"); every field optional. */
export interface RunSettings {
  apps?: number;
  databases?: number;
  caches?: number;
  secrets?: number;
  readyAfter?: { distribution: 'uniform'; minMs: number; maxMs: number } | { distribution: 'fixed'; ms: number };
  dangling?: { typo?: number; wrongNamespace?: number; kindNotInstalled?: number };
  churn?: { dropKind: 'Cache'; afterMs: number };
  backoffPreset?: 'client-go' | 'crossplane';
  timeoutMs?: number;
  seed?: number;
}

export interface RunView {
  id: string;
  namespace: string;
  phase: string;
}

/** startRun creates a demo run on the real server; the server refuses a second active run, so earlier ones are deleted first. */
export async function startRun(request: APIRequestContext, settings: RunSettings): Promise<RunView> {
  await deleteAllRuns(request);
  const res = await request.post('/api/v1/demo/runs', { data: settings });
  expect(res.status(), await res.text()).toBe(201);
  return (await res.json()) as RunView;
}

/** deleteAllRuns stops and deletes every run the server keeps, with its objects. */
export async function deleteAllRuns(request: APIRequestContext): Promise<void> {
  const res = await request.get('/api/v1/demo/runs');
  if (!res.ok()) return;
  const { items } = (await res.json()) as { items: RunView[] };
  for (const run of items) {
    const del = await request.delete(`/api/v1/demo/runs/${run.id}`);
    expect([200, 404]).toContain(del.status());
  }
}

/** openDashboard loads the dashboard (optionally with a query) in a theme and waits for the first snapshot. */
export async function openDashboard(page: Page, query = '', theme: 'light' | 'dark' = 'light'): Promise<void> {
  await page.emulateMedia({ colorScheme: theme });
  await page.addInitScript((t) => localStorage.setItem('refwatch.theme', t), theme);
  await page.goto(`/${query}`);
  await expect(page.locator('[data-conn]')).toHaveAttribute('data-conn', 'live');
}

/** objectRow is the objects-table row of a node, found by its accessible name ("shop-0, App in ns, Waiting"). */
export function objectRow(page: Page, name: string, namespace: string) {
  return page
    .locator('#objects tbody tr')
    .filter({ has: page.getByRole('cell', { name, exact: true }) })
    .filter({ has: page.getByRole('cell', { name: namespace, exact: true }) });
}

/** stuckEntry is the Stuck panel's entry of an object, found by its namespace and name. */
export function stuckEntry(page: Page, namespace: string, name: string) {
  return page
    .getByRole('list', { name: /Stuck references/ })
    .getByRole('listitem')
    .filter({ has: page.getByRole('button', { name: new RegExp(`${namespace}/\\s*${name}$`) }) });
}

/** graphNodeCount reads the node count the graph announces (its canvas has no DOM per node). */
export async function graphNodeCount(page: Page): Promise<number> {
  const label = (await page.getByTestId('graph-canvas').getAttribute('aria-label')) ?? '';
  const m = /with (\d+) nodes/.exec(label);
  return m ? Number(m[1]) : -1;
}

/** settle waits for the graph's layout to finish drawing before a screenshot. */
export async function settle(page: Page, ms = 1200): Promise<void> {
  await page.waitForTimeout(ms);
}

/**
 * StreamRelay sits between the page and GET /api/v1/stream so a test can
 * drop the stream the way a server or proxy would: `drop()` cuts every open
 * stream and holds new connections until `restore()` lets them through.
 */
export class StreamRelay {
  private readonly open = new Set<IncomingMessage>();
  private held: (() => void)[] = [];
  private down = false;
  private server: Server | undefined;
  connections = 0;

  constructor(private readonly upstream: string) {}

  async start(): Promise<string> {
    this.server = createServer((req, res) => this.handle(req, res));
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  /** route sends the page's stream requests through the relay; everything else goes to the server as usual. */
  async route(page: Page, relayUrl: string): Promise<void> {
    await page.route('**/api/v1/stream*', (route) => {
      const url = new URL(route.request().url());
      return route.continue({ url: `${relayUrl}${url.pathname}${url.search}` });
    });
  }

  drop(): void {
    this.down = true;
    for (const upstream of this.open) upstream.destroy();
    this.open.clear();
  }

  restore(): void {
    this.down = false;
    const held = this.held;
    this.held = [];
    for (const go of held) go();
  }

  async stop(): Promise<void> {
    this.drop();
    this.held = [];
    this.server?.closeAllConnections();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const go = () => {
      this.connections++;
      const headers = { ...req.headers, host: new URL(this.upstream).host };
      const up = httpRequest(`${this.upstream}${req.url}`, { method: 'GET', headers }, (upRes) => {
        this.open.add(upRes);
        res.writeHead(upRes.statusCode ?? 502, upRes.headers);
        upRes.pipe(res);
        upRes.on('close', () => {
          this.open.delete(upRes);
          res.destroy(); // the page sees the stream end as a dropped connection
        });
      });
      up.on('error', () => res.destroy());
      req.on('close', () => up.destroy());
      up.end();
    };
    if (this.down) this.held.push(go);
    else go();
  }
}
