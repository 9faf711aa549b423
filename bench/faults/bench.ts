import os from 'node:os';
import { report, result } from '../report';
import { FAULT_CASES, runCase, type FaultCase } from './cases';

// faults: each fault case on a real kube-apiserver and etcd of its own, during
// a live workload of REFWATCH_FAULTS_APPS Apps (default 500); see cases.ts for
// what each case does and docs/reliability.md for the figures.
//
// Targets: lost == 0, a correctness figure (an App never resolved, resolved twice, reconciled after
// its deletion, or a deletion missed), which fails the bench; recoverySeconds <= 30, the cap of
// client-go's reflector backoff, so refwatch is back no later than a controller-runtime controller.
//
// Env:
//   REFWATCH_FAULTS_APPS   Apps per case, default 500
//   REFWATCH_FAULTS_CASES  cases to run, default all: gone,apiserverRestart,etcdRestart,throttled,rbac

function parseCases(text: string | undefined): FaultCase[] {
  if (text === undefined || text.trim() === '') return [...FAULT_CASES];
  return text.split(',').map((n) => {
    const name = n.trim();
    if (!(FAULT_CASES as readonly string[]).includes(name))
      throw new Error(`REFWATCH_FAULTS_CASES: unknown case "${name}"; choose from ${FAULT_CASES.join(', ')}`);
    return name as FaultCase;
  });
}

async function main(): Promise<void> {
  const apps = Number(process.env.REFWATCH_FAULTS_APPS ?? 500);
  if (!Number.isInteger(apps) || apps < 20 || apps > 5000)
    throw new Error(
      `REFWATCH_FAULTS_APPS: "${process.env.REFWATCH_FAULTS_APPS}" must be a whole number from 20 to 5000`,
    );
  const cases = parseCases(process.env.REFWATCH_FAULTS_CASES);
  const lines: (() => void)[] = [];
  for (const name of cases) {
    const started = Date.now();
    const { outcome: o, observed } = await runCase(name, { apps });
    console.log(
      `${name}: ${o.apps} Apps (${o.deleted} deleted, ${o.expectedResolved} to resolve), ${o.waitingAtClear} waiting when the fault cleared, ` +
        `relists ${JSON.stringify(o.relists.map((r) => `${r.kind}:${r.reason}=${r.count}`))}, observed ${JSON.stringify(observed)}, ${((Date.now() - started) / 1000).toFixed(0)} s, load ${os
          .loadavg()
          .map((l) => l.toFixed(2))
          .join(' ')}`,
    );
    for (const s of o.lostSamples) console.log(`  lost: ${s}`);
    lines.push(() => {
      result(
        `faults.${name}.lost`,
        o.lost + o.duplicated + o.reconcilesAfterDelete + o.deletionsMissed,
        'apps',
        '==',
        0,
      );
      if (o.recoverySeconds === undefined) result(`faults.${name}.recoverySeconds`, Infinity, 's', '<=', 30);
      else result(`faults.${name}.recoverySeconds`, o.recoverySeconds, 's', '<=', 30);
      report(`faults.${name}.waitingAtClear`, o.waitingAtClear, 'apps');
    });
  }
  console.log(
    `load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  for (const line of lines) line();
}

main().catch((e: unknown) => {
  console.error(`faults: ${e instanceof Error ? e.stack : String(e)}`);
  process.exit(1);
});
