import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
import type { Sample } from './sample';

/** One panel of the plot: some figures of the samples, on one y axis. */
interface Panel {
  title: string;
  unit: string;
  figures: Partial<Record<keyof Sample, string>>;
}

const PANELS: Panel[] = [
  { title: 'Memory of the server process', unit: 'MB', figures: { rssMB: 'RSS', heapUsedMB: 'heap used' } },
  {
    title: 'Change log: entities held',
    unit: 'entities',
    figures: { changelogLive: 'live entities', changelogTombstones: 'tombstones', changelogEvents: 'events' },
  },
  {
    title: 'Change log: revisions a client may be behind and still get deltas',
    unit: 'revisions',
    figures: { revisionsRetained: 'revisions retained' },
  },
  {
    title: 'Reference registry',
    unit: 'count',
    figures: { referrers: 'referrers', referents: 'referents', references: 'references' },
  },
  {
    title: 'Watches, controllers, timers, handles, series on /metrics',
    unit: 'count',
    figures: {
      watches: 'open watches',
      referenceControllers: 'reference controllers',
      timers: 'timers',
      handles: 'handles',
      sseClients: 'SSE clients',
      metricSeries: 'series on /metrics',
    },
  },
];

/** plotSvg renders the samples as an SVG: one panel per group of figures, against minutes since the start. */
export async function plotSvg(samples: readonly Sample[], title: string): Promise<string> {
  const values = samples.flatMap((s) =>
    PANELS.flatMap((p, panel) =>
      Object.entries(p.figures).map(([figure, label]) => ({
        minutes: s.elapsedS / 60,
        panel,
        series: label,
        value: s[figure as keyof Sample],
      })),
    ),
  );
  const spec: TopLevelSpec = {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: { text: title, anchor: 'start' },
    data: { values },
    vconcat: PANELS.map((p, panel) => ({
      title: p.title,
      width: 760,
      height: 150,
      transform: [{ filter: `datum.panel === ${panel}` }],
      mark: { type: 'line', interpolate: 'linear' },
      encoding: {
        x: { field: 'minutes', type: 'quantitative', title: 'minutes since start' },
        y: { field: 'value', type: 'quantitative', title: p.unit },
        color: { field: 'series', type: 'nominal', title: null, scale: { scheme: 'category10' } },
      },
      resolve: { scale: { color: 'independent' } },
    })),
    resolve: { scale: { color: 'independent' } },
    config: { legend: { orient: 'right' }, font: 'sans-serif' },
  };
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}
