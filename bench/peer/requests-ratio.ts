/** What one run's request count needs to be compared: its requests per App and how many of its Apps resolved. */
export interface RequestCount {
  implementation: string;
  apps: number;
  unresolved: number;
  /** Requests kube-apiserver served for the run, less the workload generator's, per App. */
  perApp: number;
}

/**
 * requestsRatio is refwatch's requests per App over another implementation's
 * in the same round, or why that round's counts cannot be compared.
 *
 * Every implementation writes the status of each App it resolves once, so a
 * run that resolved n of its Apps made at least n / apps requests per App.
 * A count below that, zero or negative, is not a measurement: it is the
 * generator's requests subtracted from a count of kube-apiserver's that does
 * not yet hold them all (it counts a request when the request ends, and a
 * loaded server ends them late).
 */
export function requestsRatio(
  refwatch: RequestCount,
  other: RequestCount,
): { ratio: number } | { notMeasurable: string } {
  for (const run of [refwatch, other]) {
    const floor = (run.apps - run.unresolved) / run.apps;
    if (!Number.isFinite(run.perApp) || run.perApp <= 0 || run.perApp < floor) {
      const counted = Number.isFinite(run.perApp) ? run.perApp.toFixed(2) : String(run.perApp);
      return {
        notMeasurable: `${run.implementation} counted ${counted} requests/App, below the ${floor.toFixed(2)} its ${run.apps - run.unresolved} resolved Apps' status writes alone make: kube-apiserver's counts were not complete when read`,
      };
    }
  }
  return { ratio: refwatch.perApp / other.perApp };
}
