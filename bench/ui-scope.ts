// npx tsx bench/ui-scope.ts: one namespace of 5,000 nodes drawn with the layered layout, in headless Chromium.
// As in bench/ui.ts the page code runs unchanged against the production build and only the network is
// synthetic (page.route). ui.scope.render is the time from the snapshot in hand to the laid-out graph drawn: its
// first frame, which holds every node and the edges that cross the opening view; ui.scope.complete (reported)
// is the time until the held-back edges are drawn too.
// Target: within 3 s, as the dashboard's first render (bench/ui.ts): before people give up on a page.
// REFWATCH_UI_SCREENSHOT=path saves what the first view shows; REFWATCH_UI_PROFILE=path saves a CPU profile of the
// first load (.cpuprofile, for Chromium's DevTools) and prints the functions that took the most time.
import type { Page } from '@playwright/test';
import { encodeSnapshot } from '../lib/changelog/codec';
import type { Snapshot } from '../lib/changelog/wire';
import { NAMESPACE, synthesize } from './browser/scope-data';
import { launchChromium, measures, sse, startServer, waitFor } from './browser/page';
import { report, result } from './report';
import { writeFileSync } from 'node:fs';
import { browserCpuMs, topSelfTime } from './browser/profile';

const FIRST_RENDER = 'refwatch:graph:first-render';
const COMPLETE = 'refwatch:graph:complete';
const LOADS = 3;

/** loadScope opens the namespace's view on the synthetic data and waits for the layered graph to be drawn. */
async function loadScope(
  page: Page,
  url: string,
  snapshot: Snapshot,
  profile?: string,
): Promise<{ render: number; complete: number }> {
  const headers = { 'cache-control': 'no-store' };
  const wire = encodeSnapshot(snapshot); // the lean wire format, as the server sends it
  await page.route(/\/api\/v1\/snapshot(\?|$)/, (route) =>
    route.fulfill({ body: wire, contentType: 'application/json', headers }),
  );
  // One connection with the snapshot; the browser then waits an hour before reconnecting.
  await page.route(/\/api\/v1\/stream(\?|$)/, (route) =>
    route.fulfill({
      status: 200,
      headers: { ...headers, 'content-type': 'text/event-stream' },
      body: `retry: 3600000\n\n${sse(snapshot.revision, 'snapshot', wire)}`,
    }),
  );
  const cdp = profile ? await page.context().newCDPSession(page) : undefined;
  if (cdp) {
    await cdp.send('Profiler.enable');
    await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
    await cdp.send('Profiler.start');
  }
  await page.goto(url, { waitUntil: 'domcontentloaded' });
  const ms = await waitFor(FIRST_RENDER, 120_000, async () => (await measures(page, FIRST_RENDER))[0]);
  if (cdp && profile) {
    const { profile: taken } = await cdp.send('Profiler.stop');
    writeFileSync(profile, JSON.stringify(taken));
    console.log(`CPU profile of the load saved to ${profile}; the most self time:`);
    for (const line of topSelfTime(taken, 15)) console.log(`  ${line}`);
  }
  const complete = await waitFor(COMPLETE, 120_000, async () => (await measures(page, COMPLETE))[0]);
  return { render: ms, complete };
}

async function main(): Promise<void> {
  const data = synthesize(Date.now());
  console.log(
    `synthetic namespace ${NAMESPACE}: ${data.nodes} nodes, ${data.edges} edges; the page code runs unchanged, /api/v1/snapshot and /api/v1/stream are answered with page.route`,
  );
  const server = await startServer(3191);
  const browser = await launchChromium();
  try {
    const renders: number[] = [];
    const completes: number[] = [];
    const cpus: number[] = [];
    for (let i = 0; i < LOADS; i++) {
      const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
      const page = await context.newPage();
      const profile = i === 0 ? process.env.REFWATCH_UI_PROFILE : undefined;
      const cpuBefore = browserCpuMs();
      const { render: ms, complete } = await loadScope(page, `${server.url}/?ns=${NAMESPACE}`, data.snapshot, profile);
      const cpuAfter = browserCpuMs();
      const cpu = cpuBefore !== undefined && cpuAfter !== undefined ? cpuAfter - cpuBefore : undefined;
      if (cpu !== undefined && !profile) cpus.push(cpu);
      const canvas = page.getByTestId('graph-canvas');
      const layout = await canvas.getAttribute('data-layout');
      const drawn = Number(/with (\d+) nodes/.exec((await canvas.getAttribute('aria-label')) ?? '')?.[1] ?? -1);
      if (layout !== 'layered') throw new Error(`the graph was drawn with the ${layout} layout, not the layered one`);
      if (drawn !== data.nodes) throw new Error(`the scope drew ${drawn} nodes, expected all ${data.nodes}`);
      const cpuText = cpu === undefined ? '' : `; the browser used ${cpu.toFixed(0)} ms of CPU`;
      console.log(
        `load ${i + 1}: ${drawn} nodes laid out and drawn in ${ms.toFixed(0)} ms, every edge in ${complete.toFixed(0)} ms${cpuText}`,
      );
      renders.push(ms);
      completes.push(complete);
      const shot = process.env.REFWATCH_UI_SCREENSHOT;
      if (shot && i === 0) {
        await page.waitForTimeout(500);
        await page.screenshot({ path: shot });
        console.log(`first view saved to ${shot}`);
      }
      await context.close();
    }
    renders.sort((a, b) => a - b);
    // For scale on a busy machine: the same namespace with the force option, whose dense path places columns without any layout run.
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const { render: force } = await loadScope(
      await context.newPage(),
      `${server.url}/?ns=${NAMESPACE}&layout=force`,
      data.snapshot,
    );
    await context.close();
    console.log(`same namespace, force option: drawn in ${force.toFixed(0)} ms`);
    report('ui.scope.nodes', data.nodes, 'nodes');
    report('ui.scope.render.force', Math.round(force), 'ms');
    cpus.sort((a, b) => a - b);
    // The browser's CPU time for a load, from navigation to the graph drawn: beside the wall time, it shows how
    // much of a slow figure is work and how much is waiting for a busy machine's cores.
    if (cpus.length > 0) report('ui.scope.render.cpu', Math.round(cpus[Math.floor(cpus.length / 2)]!), 'ms');
    completes.sort((a, b) => a - b);
    report('ui.scope.complete', Math.round(completes[Math.floor(completes.length / 2)]!), 'ms');
    result('ui.scope.render', Math.round(renders[Math.floor(renders.length / 2)]!), 'ms', '<=', 3000);
  } finally {
    await browser.close();
    await server.stop();
  }
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
