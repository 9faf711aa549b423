// npm run soak -- --minutes N: the standalone server (its own embedded cluster) under continuous churn.
// Demo runs are created, completed and deleted back to back through the API while SSE clients
// connect, drop and come back (resuming, too far behind, or fresh). Every --interval it reads the
// server's /metrics; at the end it compares the server's state with its start, prints RESULT
// lines and writes a plot of the samples. Exit 1 when an asserted target is missed.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { copyStandalone, startStandalone, waitReady } from '../../tests/setup/standalone';
import { report, result } from '../report';
import { DemoChurn } from './demo-churn';
import { plotSvg } from './plot';
import { formatSample, leftovers, parseSample, released, settled, slopePerHour, type Sample } from './sample';
import { StreamClients } from './stream-clients';

/** Shorter runs show warm-up, not a trend: their RSS slope is printed, not judged. */
const SLOPE_ASSERTED_FROM_MINUTES = 30;
const RSS_SLOPE_TARGET_MB_PER_HOUR = 5;
/** The change log keeps tombstones 120 s (ChangeLog retainMs) and the server compacts every 10 s: settling takes a little over that. */
const SETTLE_MS = 180_000;
const SETTLE_SAMPLE_MS = 5_000;
const FIRST_RUN_MS = 120_000;

function positive(flag: string, integer: boolean) {
  return (text: string): number => {
    const n = Number(text);
    if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n)))
      throw new InvalidArgumentError(
        `must be a positive ${integer ? 'whole ' : ''}number, e.g. ${flag} ${integer ? 20 : 3}`,
      );
    return n;
  };
}

const program = new Command('soak')
  .description(
    'Runs the standalone server under demo-run churn and reconnecting SSE clients, sampling its memory and state.',
  )
  .addOption(new Option('--minutes <n>', 'how long the churn runs').argParser(positive('--minutes', false)).default(60))
  .addOption(
    new Option(
      '--warmup <minutes>',
      'samples before this are left out of the RSS slope (default: a sixth of --minutes, at most 10)',
    ).argParser(positive('--warmup', false)),
  )
  .addOption(
    new Option('--interval <seconds>', 'seconds between samples').argParser(positive('--interval', false)).default(10),
  )
  .addOption(
    new Option('--clients <n>', 'SSE clients connected at once').argParser(positive('--clients', true)).default(20),
  )
  .addOption(
    new Option('--apps <n>', 'Apps per demo run (each with a Database, a Cache and a Secret)')
      .argParser(positive('--apps', true))
      .default(100),
  )
  .addOption(
    new Option('--grace <duration>', "the server's grace before an unreferenced kind's watch is cancelled").default(
      '5s',
    ),
  )
  .addOption(new Option('--out <file>', 'where the SVG plot goes (default: bench/out/soak-<time>.svg)'))
  .addHelpText('after', '\nExamples:\n  npm run soak -- --minutes 60\n  npm run soak -- --minutes 3 --clients 20');

interface Options {
  minutes: number;
  warmup?: number;
  interval: number;
  clients: number;
  apps: number;
  grace: string;
  out?: string;
}

async function main(o: Options): Promise<number> {
  const warmupMinutes = o.warmup ?? Math.min(10, o.minutes / 6);
  const out =
    o.out ?? path.join(import.meta.dirname, '..', 'out', `soak-${new Date().toISOString().replace(/[:.]/g, '-')}.svg`);
  console.log(
    `soak: ${o.minutes} min of churn (${o.apps} Apps a run, ${o.clients} SSE clients), a sample every ${o.interval} s, warm-up ${warmupMinutes.toFixed(1)} min`,
  );

  const copy = copyStandalone();
  const server = await startStandalone(copy.dir, {
    REFWATCH_EXAMPLE: 'none',
    REFWATCH_GRACE: o.grace,
    REFWATCH_LOG_LEVEL: 'warn',
    // Every soak client comes from loopback, which the server counts as one client; each may
    // briefly hold its old stream while its reconnect opens, hence twice as many slots.
    REFWATCH_STREAMS_PER_CLIENT: String(o.clients * 2),
  });
  // Should this process die before its finally, the server must not outlive it.
  const killServer = () => server.kill();
  process.once('exit', killServer);
  let churn: DemoChurn | undefined;
  let clients: StreamClients | undefined;
  try {
    const ready = await waitReady(server.url);
    if (ready.status !== 200) throw new Error(`the server is not ready: ${ready.body}`);
    const runSettings = { apps: o.apps, readyAfterMs: [500, 5_000] as [number, number], timeoutMs: 60_000 };
    const t0 = Date.now();
    const elapsed = () => (Date.now() - t0) / 1000;
    const scrape = async (): Promise<Sample> => {
      const res = await fetch(`${server.url}/metrics`);
      if (!res.ok) throw new Error(`GET /metrics answered ${res.status}`);
      return parseSample(await res.text(), elapsed());
    };
    const samples: Sample[] = [];
    const take = async (note = ''): Promise<Sample> => {
      const s = await scrape();
      samples.push(s);
      console.log(formatSample(s, note));
      return s;
    };
    /** Samples every few seconds until `done` holds or the time is up; returns the last sample. */
    const waitFor = async (done: (s: Sample) => boolean, ms: number, note: string): Promise<Sample> => {
      const deadline = Date.now() + ms;
      let s = await take(note);
      while (!done(s) && Date.now() < deadline) {
        await sleep(SETTLE_SAMPLE_MS);
        s = await take(note);
      }
      return s;
    };
    const boot = await take('(boot)');

    // The baseline is the server after one run was made and deleted: from then on it keeps one record
    // per referent kind whose watch it cancelled (shown as cancelled, with when and why), by design.
    console.log('soak: a first run, then the baseline once the server has released it');
    const first = new DemoChurn({ ...runSettings, url: server.url, maxRuns: 1 });
    await Promise.race([first.finished(), sleep(FIRST_RUN_MS)]);
    await first.stop();
    if (first.counts.runs < 1)
      throw new Error(
        `the first demo run did not complete within ${FIRST_RUN_MS / 1000} s: ${first.counts.lastError ?? 'no error'}`,
      );
    const start = await waitFor((s) => released(boot, s), SETTLE_MS, '(releasing the first run)');
    if (!released(boot, start)) throw new Error('the server did not release the first run: see the samples above');
    console.log(formatSample(start, '(start)'));

    const churnStartS = start.elapsedS;
    churn = new DemoChurn({ ...runSettings, url: server.url });
    clients = new StreamClients({ url: server.url, clients: o.clients, holdMs: [2_000, 20_000] });
    let interrupted = false;
    const interrupt = new AbortController();
    process.once('SIGINT', () => {
      interrupted = true;
      interrupt.abort();
    });
    const churnEnd = Date.now() + o.minutes * 60_000;
    const churnSamples: Sample[] = [start];
    while (Date.now() < churnEnd && !interrupted) {
      await sleep(Math.min(o.interval * 1000, churnEnd - Date.now()), interrupt.signal);
      churnSamples.push(await take(`runs ${churn.counts.runs}  resyncs ${clients.counts.resyncs}`));
    }

    console.log(
      `soak: stopping the churn and the SSE clients; waiting (at most ${SETTLE_MS / 1000} s) for the server to come back to its start and for the change log's retention to pass`,
    );
    await clients.stop();
    await churn.stop();
    const end = await waitFor((s) => settled(start, s), SETTLE_MS, '(settling)');
    console.log(formatSample(end, '(end)'));

    const warm = churnSamples.filter((s) => s.elapsedS >= churnStartS + warmupMinutes * 60);
    const rssSlope = slopePerHour(warm, 'rssMB');
    const asserted: boolean[] = [];
    if (o.minutes >= SLOPE_ASSERTED_FROM_MINUTES)
      asserted.push(result('soak.rssSlopeMBPerHour', rssSlope, 'MB/h', '<=', RSS_SLOPE_TARGET_MB_PER_HOUR));
    else {
      report('soak.rssSlopeMBPerHour', rssSlope, 'MB/h');
      console.log(
        `soak: the RSS slope is judged (target <= ${RSS_SLOPE_TARGET_MB_PER_HOUR} MB/h) only from ${SLOPE_ASSERTED_FROM_MINUTES} minutes; this run measured ${o.minutes}`,
      );
    }
    report('soak.heapSlopeMBPerHour', slopePerHour(warm, 'heapUsedMB'), 'MB/h');
    const left = leftovers(start, end);
    asserted.push(
      result('soak.changelog.leftover', left.changelogLive, 'entities', '<=', 0),
      result('soak.changelog.tombstones.leftover', left.changelogTombstones, 'tombstones', '<=', 0),
      result('soak.registry.referrers.leftover', left.referrers, 'referrers', '<=', 0),
      result('soak.registry.referents.leftover', left.referents, 'referents', '<=', 0),
      result('soak.registry.references.leftover', left.references, 'references', '<=', 0),
      result('soak.watches.leftover', left.watches, 'watches', '<=', 0),
      result('soak.referenceControllers.leftover', left.referenceControllers, 'controllers', '<=', 0),
      result('soak.resyncs', clients.counts.resyncs, 'resyncs', '>=', 1),
    );
    report('soak.changelog.sinceBoot', end.changelogLive - boot.changelogLive, 'entities');
    console.log(
      'soak: sinceBoot counts the records of cancelled reference controllers (one per referent kind), which the change log keeps by design',
    );
    report('soak.runs', churn.counts.runs, 'runs');
    report('soak.sse.connects', clients.counts.connects, 'connections');
    report('soak.sse.resumes', clients.counts.resumes, 'connections');
    report('soak.changelog.maxTombstones', Math.max(...samples.map((s) => s.changelogTombstones)), 'tombstones');
    report('soak.changelog.maxRevisionsRetained', Math.max(...samples.map((s) => s.revisionsRetained)), 'revisions');
    report('soak.rss.end', end.rssMB, 'MB');
    report('soak.metrics.series.leftover', end.metricSeries - start.metricSeries, 'series');
    console.log(
      `soak: runs by phase ${JSON.stringify(churn.counts.phases)}; churn errors ${churn.counts.errors}${churn.counts.lastError ? ` (last: ${churn.counts.lastError})` : ''}`,
    );
    console.log(
      `soak: SSE ${JSON.stringify({ ...clients.counts, lastError: undefined })}${clients.counts.lastError ? ` (last error: ${clients.counts.lastError})` : ''}`,
    );

    mkdirSync(path.dirname(out), { recursive: true });
    writeFileSync(
      out,
      await plotSvg(
        samples,
        `refwatch soak: ${o.minutes} min, ${churn.counts.runs} demo runs of ${o.apps} Apps, ${o.clients} SSE clients`,
      ),
    );
    console.log(`soak: plot written to ${path.relative(process.cwd(), out)}`);
    const failed = asserted.filter((ok) => !ok).length;
    if (failed) console.log(`soak: ${failed} target(s) missed`);
    return failed ? 1 : 0;
  } finally {
    await clients?.stop();
    await churn?.stop();
    await server.stop();
    process.off('exit', killServer);
    copy.remove();
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

program.parse();
main(program.opts<Options>()).then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(`soak: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(2);
  },
);
