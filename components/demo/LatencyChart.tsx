'use client';

import {
  Chart,
  Legend,
  LineController,
  LineElement,
  LinearScale,
  LogarithmicScale,
  PointElement,
  Tooltip,
  type ChartConfiguration,
} from 'chart.js';
import { useEffect, useMemo, useRef } from 'react';
import type { Theme } from '../graph/style';
import { cdfPoints, logAxisRange, type CdfPoint } from './cdf';
import { formatLatency } from './format';
import type { DemoMode } from './runView';
import styles from './DemoPanel.module.css';

Chart.register(LineController, LineElement, PointElement, LinearScale, LogarithmicScale, Legend, Tooltip);

const MODE_LABEL: Record<DemoMode, string> = { watch: 'watch (refwatch)', backoff: 'backoff (requeue)' };
/** Series colours come from the design tokens, so both themes read well. */
const MODE_COLOR: Record<DemoMode, string> = { watch: '--state-active', backoff: '--state-stuck' };

export interface LatencyChartProps {
  latencies: Record<DemoMode, readonly number[]>;
  /** Apps that can resolve: the CDF's 100 %. */
  total: number;
  theme: Theme;
}

function tokens() {
  const css = getComputedStyle(document.documentElement);
  const v = (name: string) => css.getPropertyValue(name).trim();
  return {
    watch: v(MODE_COLOR.watch),
    backoff: v(MODE_COLOR.backoff),
    grid: v('--border-muted'),
    text: v('--fg-muted'),
    font: v('--font'),
  };
}

/**
 * LatencyChart plots both modes' latency as step CDFs on a log time axis:
 * how many of the Apps each controller had resolved within a given time
 * after their last referent became ready. It updates in place as polls
 * bring more latencies.
 */
export function LatencyChart({ latencies, total, theme }: LatencyChartProps) {
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const chartRef = useRef<Chart<'line', CdfPoint[]> | null>(null);
  const series = useMemo(
    () => ({ watch: cdfPoints(latencies.watch, total), backoff: cdfPoints(latencies.backoff, total) }),
    [latencies, total],
  );
  const range = useMemo(() => logAxisRange([latencies.watch, latencies.backoff]), [latencies]);

  useEffect(() => {
    if (!canvasRef.current) return;
    const t = tokens();
    const config: ChartConfiguration<'line', CdfPoint[]> = {
      type: 'line',
      data: {
        datasets: (['watch', 'backoff'] as const).map((mode) => ({
          label: MODE_LABEL[mode],
          data: [],
          borderColor: t[mode],
          backgroundColor: t[mode],
          borderWidth: 2,
          stepped: 'after' as const,
          pointRadius: 0,
          pointHitRadius: 6,
          borderDash: mode === 'backoff' ? [6, 3] : [],
        })),
      },
      options: {
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        parsing: false,
        normalized: true,
        interaction: { mode: 'nearest', intersect: false },
        scales: {
          x: {
            type: 'logarithmic',
            min: 1,
            max: 1000,
            title: { display: true, text: 'latency after the last referent became ready (ms, log)' },
            ticks: { callback: (v) => (isDecade(Number(v)) ? formatLatency(Number(v)) : '') },
          },
          y: {
            type: 'linear',
            min: 0,
            max: 1,
            title: { display: true, text: 'Apps resolved' },
            ticks: { stepSize: 0.25, callback: (v) => `${Math.round(Number(v) * 100)}%` },
          },
        },
        plugins: {
          legend: { position: 'bottom', labels: { boxWidth: 14, boxHeight: 2 } },
          tooltip: {
            callbacks: {
              label: (ctx) =>
                `${ctx.dataset.label}: ${Math.round((ctx.parsed.y ?? 0) * 1000) / 10}% within ${formatLatency(ctx.parsed.x)}`,
            },
          },
        },
      },
    };
    const chart = new Chart(canvasRef.current, config);
    chartRef.current = chart;
    return () => {
      chart.destroy();
      chartRef.current = null;
    };
  }, []);

  useEffect(() => {
    const chart = chartRef.current;
    if (!chart) return;
    const t = tokens();
    chart.options.color = t.text;
    chart.options.font = { family: t.font, size: 11 };
    for (const axis of ['x', 'y'] as const) {
      const scale = chart.options.scales?.[axis];
      if (!scale) continue;
      scale.grid = { color: t.grid };
      scale.ticks = { ...scale.ticks, color: t.text };
      if ('title' in scale && scale.title) scale.title.color = t.text;
    }
    (['watch', 'backoff'] as const).forEach((mode, i) => {
      const ds = chart.data.datasets[i];
      if (!ds) return;
      ds.data = series[mode];
      ds.borderColor = t[mode];
      ds.backgroundColor = t[mode];
    });
    const x = chart.options.scales?.x;
    if (x) {
      x.min = range.min;
      x.max = range.max;
    }
    chart.update('none');
  }, [series, range, theme]);

  const resolved = (mode: DemoMode) => latencies[mode].length;
  return (
    <div className={styles.chartBox}>
      <canvas
        ref={canvasRef}
        role="img"
        data-testid="demo-chart"
        data-watch-points={series.watch.length}
        data-backoff-points={series.backoff.length}
        data-watch-apps={resolved('watch')}
        data-backoff-apps={resolved('backoff')}
        aria-label={`Latency CDF: watch resolved ${resolved('watch')} and backoff ${resolved('backoff')} of ${total} Apps. The table below gives the percentiles.`}
      />
    </div>
  );
}

function isDecade(v: number): boolean {
  const l = Math.log10(v);
  return Math.abs(l - Math.round(l)) < 1e-9;
}
