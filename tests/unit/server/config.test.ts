import { describe, expect, it } from 'vitest';
import { flagsToEnv, parseConfig, parseDurationMs } from '@/server/config';

describe('config', () => {
  it('defaults to the embedded cluster on 127.0.0.1:3000 with the demo on', () => {
    const c = parseConfig({});
    expect(c).toMatchObject({ cluster: { mode: 'embedded' }, host: '127.0.0.1', port: 3000, graceMs: 30_000, stuckThresholdMs: 30_000, rulePacks: ['core'], demo: true });
    expect(c.token).toBeUndefined();
  });

  it('selects a kubeconfig context, with the demo off by default', () => {
    const c = parseConfig({ KUBECONFIG: '/k/config:/other', REFWATCH_CONTEXT: 'prod' });
    expect(c.cluster).toEqual({ mode: 'kubeconfig', path: '/k/config', context: 'prod' });
    expect(c.demo).toBe(false);
  });

  it.each([
    [{ REFWATCH_CLUSTER: 'minikube' }, /REFWATCH_CLUSTER \(flag --cluster\).*accepted: embedded \| kubeconfig \| in-cluster/],
    [{ REFWATCH_PORT: '99999' }, /REFWATCH_PORT \(flag --port\).*accepted: a port number/],
    [{ REFWATCH_GRACE: 'soon' }, /REFWATCH_GRACE \(flag --grace\).*accepted: a duration/],
    [{ REFWATCH_TOKEN: 'short' }, /REFWATCH_TOKEN \(flag --token\)/],
    [{ REFWATCH_RULE_PACKS: 'core,istio' }, /unknown pack "istio"/],
    [{ REFWATCH_DEMO: 'yes' }, /REFWATCH_DEMO \(flag --demo\).*on \| off/],
  ])('names the variable, the flag and the accepted values: %o', (env, re) => {
    expect(() => parseConfig(env)).toThrow(re);
  });

  it('parses durations', () => {
    expect(parseDurationMs('250ms', 'x')).toBe(250);
    expect(parseDurationMs('1.5s', 'x')).toBe(1500);
    expect(parseDurationMs('2m', 'x')).toBe(120_000);
    expect(parseDurationMs('1500', 'x')).toBe(1500);
    expect(() => parseDurationMs('-1s', 'x')).toThrow(/x "-1s"/);
  });

  it('maps flags to variables and rejects unknown ones', () => {
    expect(flagsToEnv(['--context', 'prod', '--port=3001'])).toEqual({ REFWATCH_CONTEXT: 'prod', REFWATCH_PORT: '3001', REFWATCH_CLUSTER: 'kubeconfig' });
    expect(() => flagsToEnv(['--colour', 'red'])).toThrow(/unknown flag --colour/);
    expect(() => flagsToEnv(['--context'])).toThrow(/needs a value/);
  });
});
