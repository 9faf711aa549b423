'use client';

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useState, type ChangeEvent, type FormEvent, type ReactNode } from 'react';
import { useTheme } from '../ui/theme';
import { DEMO_QUERY_KEY, DemoApiError, deleteRun, exportUrl, getRun, listRuns, startRun, stopRun } from './api';
import { formatCount, formatLatency, formatPerApp, formatSpeedup, phaseText, share } from './format';
import { LatencyChart } from './LatencyChart';
import { DEFAULT_FORM, fieldMessage, formFieldOf, formToRequest, type DemoForm, type FormField } from './request';
import { DEMO_MODES, isActivePhase, type DemoMode, type DemoRunView, type Percentiles } from './runView';
import panels from '../panels/panels.module.css';
import styles from './DemoPanel.module.css';

const RUNS_KEY = [...DEMO_QUERY_KEY, 'runs'] as const;
const runKey = (id: string | undefined) => [...DEMO_QUERY_KEY, 'run', id ?? ''] as const;
const POLL_MS = 500;
const NO_LATENCIES: Record<DemoMode, number[]> = { watch: [], backoff: [] };

type FieldErrors = Partial<Record<FormField, string>>;

/**
 * DemoPanel runs the fast-vs-backoff demo: a form that starts a run
 * (POST /api/v1/demo/runs), then the run's progress, a live latency CDF of
 * both controllers and their figures, polled while it runs. Stop is
 * POST /api/v1/demo/runs/ID/stop: the run keeps its objects, figures and
 * exports (and its graph on the dashboard) until Delete, which is
 * DELETE /api/v1/demo/runs/ID.
 */
export function DemoPanel() {
  const client = useQueryClient();
  const { theme } = useTheme();
  const [form, setForm] = useState<DemoForm>(DEFAULT_FORM);
  const [fieldErrors, setFieldErrors] = useState<FieldErrors>({});
  const [formError, setFormError] = useState<string | null>(null);
  // undefined: show the newest run the server keeps; null: none (the user deleted or dismissed it).
  const [runId, setRunId] = useState<string | null | undefined>(undefined);
  const [settingsOpen, setSettingsOpen] = useState<boolean | undefined>(undefined);

  const runs = useQuery({
    queryKey: RUNS_KEY,
    queryFn: ({ signal }) => listRuns(signal),
    staleTime: 0,
    retry: false,
    refetchOnWindowFocus: false,
  });
  const id = runId === undefined ? runs.data?.at(-1)?.id : (runId ?? undefined);
  const run = useQuery({
    queryKey: runKey(id),
    queryFn: ({ signal }) => getRun(id!, signal),
    enabled: id !== undefined,
    staleTime: 0,
    retry: false,
    refetchOnWindowFocus: false,
    refetchInterval: (q) => (isActivePhase(q.state.data?.phase) ? POLL_MS : false),
  });
  const view = run.data;
  const active = isActivePhase(view?.phase);
  const demoOff = runs.error instanceof DemoApiError && runs.error.status === 404 ? runs.error.message : undefined;

  const start = useMutation({
    mutationFn: startRun,
    onMutate: () => {
      setFieldErrors({});
      setFormError(null);
    },
    onSuccess: (v) => {
      client.setQueryData(runKey(v.id), v);
      setRunId(v.id);
      setSettingsOpen(false);
      void client.invalidateQueries({ queryKey: RUNS_KEY });
    },
    onError: (e) => {
      const field = e instanceof DemoApiError ? formFieldOf(e.field) : undefined;
      if (e instanceof DemoApiError && field) setFieldErrors({ [field]: fieldMessage(e.field, e.message) });
      else setFormError(e.message);
    },
  });
  const stop = useMutation({
    mutationFn: stopRun,
    onSuccess: (v) => {
      client.setQueryData(runKey(v.id), v);
      setRunId(v.id);
      void client.invalidateQueries({ queryKey: RUNS_KEY });
    },
    onError: (e) => setFormError(e.message),
  });
  const remove = useMutation({
    mutationFn: async (runIdToDelete: string) => {
      try {
        return await deleteRun(runIdToDelete);
      } catch (e) {
        if (e instanceof DemoApiError && e.status === 404) return undefined; // already gone: nothing left to delete
        throw e;
      }
    },
    onSuccess: (_, deleted) => {
      client.removeQueries({ queryKey: runKey(deleted) });
      setRunId(null);
      setSettingsOpen(true);
      void client.invalidateQueries({ queryKey: RUNS_KEY });
    },
    onError: (e) => setFormError(e.message),
  });

  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    if (start.isPending) return;
    start.mutate(formToRequest(form));
  };
  const set = (field: keyof DemoForm) => (e: ChangeEvent<HTMLInputElement | HTMLSelectElement>) => {
    const value =
      e.target instanceof HTMLInputElement && e.target.type === 'checkbox' ? e.target.checked : e.target.value;
    setForm((f) => ({ ...f, [field]: value }));
    if (field !== 'churn' && fieldErrors[field]) setFieldErrors((errs) => ({ ...errs, [field]: undefined }));
  };

  const open = settingsOpen ?? !view;
  const runGone = run.error instanceof DemoApiError && run.error.status === 404;

  return (
    <div className={styles.panel} data-testid="demo-panel">
      <p className={styles.intro}>
        The same Apps, reconciled two ways: <strong>watch</strong> (woken by refwatch&apos;s shared watch the moment a
        referent turns Ready) and <strong>backoff</strong> (requeued with per-item exponential backoff). Latency is the
        time from an App&apos;s last referent turning Ready to the controller resolving it.
      </p>
      {demoOff ? (
        <p className={panels.note} role="status">
          {demoOff}
        </p>
      ) : null}

      <details
        className={styles.settings}
        open={open}
        onToggle={(e) => setSettingsOpen((e.currentTarget as HTMLDetailsElement).open)}
      >
        <summary>Run settings</summary>
        <form onSubmit={onSubmit} noValidate aria-label="Demo run settings" className={styles.form}>
          <div className={styles.grid2}>
            <NumberField
              name="apps"
              label="Apps"
              hint="1–5000"
              form={form}
              errors={fieldErrors}
              onChange={set('apps')}
              step="1"
              min="1"
            />
            <NumberField
              name="referents"
              label="Referents per kind"
              hint="Databases, Caches, Secrets; empty: one per App"
              placeholder="= Apps"
              form={form}
              errors={fieldErrors}
              onChange={set('referents')}
              step="1"
              min="1"
            />
          </div>
          <fieldset className={styles.fieldset}>
            <legend>Referents become Ready after (uniform)</legend>
            <div className={styles.grid2}>
              <NumberField
                name="readyMinS"
                label="Min (s)"
                form={form}
                errors={fieldErrors}
                onChange={set('readyMinS')}
                step="0.1"
                min="0"
              />
              <NumberField
                name="readyMaxS"
                label="Max (s)"
                form={form}
                errors={fieldErrors}
                onChange={set('readyMaxS')}
                step="0.1"
                min="0"
              />
            </div>
          </fieldset>
          <fieldset className={styles.fieldset}>
            <legend>Dangling references (fraction of Apps, 0–1)</legend>
            <div className={styles.grid3}>
              <NumberField
                name="typo"
                label="Typo"
                form={form}
                errors={fieldErrors}
                onChange={set('typo')}
                step="0.01"
                min="0"
                max="1"
              />
              <NumberField
                name="wrongNamespace"
                label="Wrong namespace"
                form={form}
                errors={fieldErrors}
                onChange={set('wrongNamespace')}
                step="0.01"
                min="0"
                max="1"
              />
              <NumberField
                name="kindNotInstalled"
                label="Kind not installed"
                form={form}
                errors={fieldErrors}
                onChange={set('kindNotInstalled')}
                step="0.01"
                min="0"
                max="1"
              />
            </div>
          </fieldset>
          <div className={styles.churnRow}>
            <label className={styles.check}>
              <input type="checkbox" checked={form.churn} onChange={set('churn')} /> Churn: drop every cacheRef
            </label>
            <NumberField
              name="churnAfterS"
              label="after (s)"
              form={form}
              errors={fieldErrors}
              onChange={set('churnAfterS')}
              step="0.1"
              min="0"
              disabled={!form.churn}
              inline
            />
          </div>
          <div className={styles.grid2}>
            <SelectField
              name="backoffPreset"
              label="Backoff preset"
              form={form}
              errors={fieldErrors}
              onChange={set('backoffPreset')}
            >
              <option value="client-go">client-go</option>
              <option value="crossplane">Crossplane</option>
            </SelectField>
            <NumberField
              name="timeoutS"
              label="Timeout (s)"
              hint="1–600"
              form={form}
              errors={fieldErrors}
              onChange={set('timeoutS')}
              step="1"
              min="1"
            />
          </div>
          {formError ? (
            <p className={styles.formError} role="alert">
              {formError}
            </p>
          ) : null}
          <div className={styles.actions}>
            <button
              type="submit"
              className={styles.primary}
              disabled={start.isPending || active || demoOff !== undefined}
            >
              {start.isPending ? 'Starting…' : 'Start run'}
            </button>
            {active ? <span className={panels.muted}>One run at a time: stop this one to start another.</span> : null}
            <button type="button" className={styles.secondary} onClick={() => setForm(DEFAULT_FORM)}>
              Reset
            </button>
          </div>
        </form>
      </details>

      {runGone ? (
        <p className={panels.note} role="status">
          Run {id} is no longer on the server (deleted elsewhere, or the oldest of the five kept).{' '}
          <button type="button" className={panels.inlineLink} onClick={() => setRunId(null)}>
            Dismiss
          </button>
        </p>
      ) : null}
      {view ? (
        <RunView
          view={view}
          theme={theme}
          stopping={stop.isPending}
          deleting={remove.isPending}
          onStop={() => stop.mutate(view.id)}
          onDelete={() => remove.mutate(view.id)}
        />
      ) : run.isPending && id !== undefined ? (
        <p className={panels.muted}>Loading run {id}…</p>
      ) : null}
    </div>
  );
}

interface FieldProps {
  name: FormField;
  label: string;
  hint?: string;
  form: DemoForm;
  errors: FieldErrors;
  disabled?: boolean;
}

function useFieldIds(name: string) {
  const base = useId();
  return { input: `${base}-${name}`, error: `${base}-${name}-error`, hint: `${base}-${name}-hint` };
}

function NumberField({
  name,
  label,
  hint,
  form,
  errors,
  onChange,
  disabled,
  inline,
  ...rest
}: FieldProps & {
  onChange(e: ChangeEvent<HTMLInputElement>): void;
  inline?: boolean;
  step?: string;
  min?: string;
  max?: string;
  placeholder?: string;
}) {
  const ids = useFieldIds(name);
  const error = errors[name];
  const describedBy = [error ? ids.error : '', hint ? ids.hint : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div className={inline ? styles.fieldInline : styles.field} data-invalid={error ? 'true' : undefined}>
      <label htmlFor={ids.input}>{label}</label>
      <input
        id={ids.input}
        name={name}
        type="number"
        inputMode="decimal"
        value={form[name] as string}
        onChange={onChange}
        disabled={disabled}
        aria-invalid={error ? true : undefined}
        aria-describedby={describedBy}
        {...rest}
      />
      {hint && !inline ? (
        <span id={ids.hint} className={styles.hint}>
          {hint}
        </span>
      ) : null}
      {error ? (
        <span id={ids.error} className={styles.fieldError} role="alert">
          {error}
        </span>
      ) : null}
    </div>
  );
}

function SelectField({
  name,
  label,
  form,
  errors,
  onChange,
  children,
}: FieldProps & { onChange(e: ChangeEvent<HTMLSelectElement>): void; children: ReactNode }) {
  const ids = useFieldIds(name);
  const error = errors[name];
  return (
    <div className={styles.field} data-invalid={error ? 'true' : undefined}>
      <label htmlFor={ids.input}>{label}</label>
      <select
        id={ids.input}
        name={name}
        value={form[name] as string}
        onChange={onChange}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? ids.error : undefined}
      >
        {children}
      </select>
      {error ? (
        <span id={ids.error} className={styles.fieldError} role="alert">
          {error}
        </span>
      ) : null}
    </div>
  );
}

function RunView({
  view,
  theme,
  stopping,
  deleting,
  onStop,
  onDelete,
}: {
  view: DemoRunView;
  theme: 'light' | 'dark';
  stopping: boolean;
  deleting: boolean;
  onStop(): void;
  onDelete(): void;
}) {
  const active = isActivePhase(view.phase);
  const p = view.progress;
  const resolvable = p.apps.resolvable;
  const latencies = view.latencies ?? NO_LATENCIES;
  return (
    <section className={styles.run} aria-labelledby="demo-run-title" data-testid="demo-run" data-phase={view.phase}>
      <header className={styles.runHead}>
        <h3 id="demo-run-title">
          Run <span className="mono">{view.id}</span>
        </h3>
        <span className={styles.phase} data-phase={view.phase} role="status" aria-live="polite">
          {phaseText(view.phase)}
        </span>
        <span className={panels.muted}>{(p.elapsedMs / 1000).toFixed(1)} s</span>
        <span className={styles.spacer} />
        {active ? (
          <button type="button" className={styles.danger} onClick={onStop} disabled={stopping || deleting}>
            {stopping ? 'Stopping…' : 'Stop'}
          </button>
        ) : null}
        <button type="button" className={styles.secondary} onClick={onDelete} disabled={stopping || deleting}>
          {deleting ? 'Deleting…' : 'Delete run'}
        </button>
      </header>
      <p className={styles.runMeta}>
        {formatCount(view.config.apps)} Apps · {view.config.backoffPreset} backoff · namespace{' '}
        <span className="mono">{view.namespace}</span>
      </p>
      {view.error ? (
        <div className={panels.errorBox} role="alert">
          <strong>The run failed:</strong> {view.error}
        </div>
      ) : null}

      <div className={styles.progress}>
        <Progress label="Objects created" done={p.objects.created} total={p.objects.planned} />
        <Progress label="Referents ready" done={p.referents.ready} total={p.referents.total} />
        <Progress label="Resolved by watch" done={p.resolved.watch} total={resolvable} mode="watch" />
        <Progress label="Resolved by backoff" done={p.resolved.backoff} total={resolvable} mode="backoff" />
      </div>

      <h4 className={panels.subhead}>Latency, both modes</h4>
      <LatencyChart latencies={latencies} total={resolvable} theme={theme} />

      <h4 className={panels.subhead}>Summary</h4>
      <SummaryTable view={view} />

      {view.results.dangling.total > 0 ? (
        <p className={styles.footnote}>
          <strong>{view.results.dangling.total}</strong> Apps have a dangling reference and never resolve (typo{' '}
          {view.results.dangling.byKind.typo}, wrong namespace {view.results.dangling.byKind.wrongNamespace}, kind not
          installed {view.results.dangling.byKind.kindNotInstalled}); they are left out of the percentiles and show in
          the Stuck tab with a fix.
        </p>
      ) : null}
      {view.results.churn ? (
        <p className={styles.footnote}>
          Churn:{' '}
          {view.results.churn.appliedAt
            ? `dropped the cacheRef of ${view.results.churn.apps} Apps ${formatLatency(Date.parse(view.results.churn.appliedAt) - Date.parse(view.startedAt))} into the run; an App it freed (its Cache not yet Ready) counts its latency from the patch. With no reference to a Cache left, its reference controller is cancelled after the grace period (Controllers tab).`
            : `every App's cacheRef is dropped ${formatLatency(view.results.churn.afterMs)} after the objects exist.`}
        </p>
      ) : null}

      <p className={styles.exports}>
        Export:{' '}
        <a href={exportUrl(view.id, 'json')} download>
          JSON
        </a>{' '}
        ·{' '}
        <a href={exportUrl(view.id, 'csv')} download>
          CSV
        </a>{' '}
        <span className={panels.muted}>(one row per App)</span>
      </p>
      {!active ? (
        <p className={styles.footnote}>
          The run&apos;s objects stay in namespace <span className="mono">{view.namespace}</span>, and its graph on the
          dashboard (controller <span className="mono">{view.watchController}</span>), until you delete the run.
        </p>
      ) : null}
    </section>
  );
}

function Progress({ label, done, total, mode }: { label: string; done: number; total: number; mode?: DemoMode }) {
  const id = useId();
  return (
    <div className={styles.progressRow} data-mode={mode}>
      <span id={id}>{label}</span>
      <progress aria-labelledby={id} max={1} value={share(done, total)} />
      <span className={styles.progressCount}>
        {formatCount(done)}/{formatCount(total)}
      </span>
    </div>
  );
}

type Metric = {
  label: string;
  title?: string;
  value(mode: DemoMode): ReactNode;
  ms?(mode: DemoMode): number | undefined;
  speedup?: 'p50' | 'p90' | 'p99';
};

function SummaryTable({ view }: { view: DemoRunView }) {
  const figures = (mode: DemoMode): { l: Percentiles | null; censored: boolean } => {
    const m = view.results.modes[mode];
    return m.censoredLatencyMs ? { l: m.censoredLatencyMs, censored: true } : { l: m.latencyMs, censored: false };
  };
  const latency = (k: keyof Percentiles): Pick<Metric, 'value' | 'ms'> => ({
    value: (mode) => {
      const { l, censored } = figures(mode);
      return `${censored && l ? '≥ ' : ''}${formatLatency(l?.[k])}`;
    },
    ms: (mode) => figures(mode).l?.[k],
  });
  const metrics: Metric[] = [
    {
      label: 'Resolved',
      value: (mode) =>
        `${formatCount(view.results.modes[mode].resolved)}/${formatCount(view.progress.apps.resolvable)}`,
    },
    { label: 'p50', ...latency('p50'), speedup: 'p50' },
    { label: 'p90', ...latency('p90'), speedup: 'p90' },
    { label: 'p99', ...latency('p99'), speedup: 'p99' },
    { label: 'max', ...latency('max') },
    { label: 'Reconciles per App', value: (mode) => formatPerApp(view.results.modes[mode].reconciles.perApp) },
    {
      label: 'API requests',
      title: 'by its reconciles, plus the list and watch requests of the watches it uses',
      value: (mode) => formatCount(view.results.modes[mode].requests.total),
    },
    { label: 'API requests per App', value: (mode) => formatPerApp(view.results.modes[mode].requests.perApp) },
  ];
  const s = view.results.speedup;
  const anyCensored = DEMO_MODES.some((m) => figures(m).censored);
  return (
    <>
      <table className={panels.miniTable} data-testid="demo-summary">
        <caption className="visually-hidden">Per-mode figures; speedup is backoff ÷ watch</caption>
        <thead>
          <tr>
            <th scope="col">Figure</th>
            <th scope="col" className={styles.num} data-mode="watch">
              watch
            </th>
            <th scope="col" className={styles.num} data-mode="backoff">
              backoff
            </th>
            <th scope="col" className={styles.num}>
              speedup
            </th>
          </tr>
        </thead>
        <tbody>
          {metrics.map((m) => (
            <tr key={m.label} data-metric={m.label}>
              <th scope="row" title={m.title} className={styles.rowHead}>
                {m.label}
              </th>
              {DEMO_MODES.map((mode) => (
                <td key={mode} className={styles.num} data-mode={mode} data-ms={m.ms?.(mode) ?? undefined}>
                  {m.value(mode)}
                </td>
              ))}
              <td className={`${styles.num} ${styles.speedup}`}>
                {m.speedup ? formatSpeedup(s[m.speedup], s.censored) : ''}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {anyCensored ? (
        <p className={styles.footnote}>
          ≥: some Apps were still unresolved; each counts at the time it has waited so far, so these figures are lower
          bounds.
        </p>
      ) : null}
    </>
  );
}
