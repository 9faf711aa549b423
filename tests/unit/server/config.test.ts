import { describe, expect, it } from 'vitest';
import { flagsToEnv, parseConfig, parseDurationMs } from '@/server/config';

describe('config', () => {
  it('defaults to the embedded cluster on 127.0.0.1:3000 with the demo on', () => {
    const c = parseConfig({});
    expect(c).toMatchObject({
      cluster: { mode: 'embedded' },
      host: '127.0.0.1',
      port: 3000,
      graceMs: 30_000,
      stuckThresholdMs: 30_000,
      rulePacks: ['core'],
      packsAuto: true,
      demo: true,
    });
    expect(c.token).toBeUndefined();
  });

  it('packs default to auto (core always on); an explicit list wins', () => {
    expect(parseConfig({})).toMatchObject({ rulePacks: ['core'], packsAuto: true });
    expect(parseConfig({ REFWATCH_RULE_PACKS: 'core,cert-manager' })).toMatchObject({
      rulePacks: ['core', 'cert-manager'],
      packsAuto: false,
    });
    expect(parseConfig({ REFWATCH_RULE_PACKS: 'none' })).toMatchObject({ rulePacks: [], packsAuto: false });
  });

  it('selects a kubeconfig context, with the demo off by default', () => {
    const c = parseConfig({ KUBECONFIG: '/k/config:/other', REFWATCH_CONTEXT: 'prod' });
    expect(c.cluster).toEqual({ mode: 'kubeconfig', path: '/k/config', context: 'prod' });
    expect(c.demo).toBe(false);
  });

  it.each([
    [
      { REFWATCH_CLUSTER: 'minikube' },
      /REFWATCH_CLUSTER \(flag --cluster\).*accepted: embedded \| kubeconfig \| in-cluster/,
    ],
    [{ REFWATCH_PORT: '99999' }, /REFWATCH_PORT \(flag --port\).*accepted: a port number/],
    [{ REFWATCH_GRACE: 'soon' }, /REFWATCH_GRACE \(flag --grace\).*accepted: a duration/],
    [{ REFWATCH_TOKEN: 'short' }, /REFWATCH_TOKEN \(flag --token\)/],
    [{ REFWATCH_RULE_PACKS: 'core,istio' }, /unknown pack "istio"/],
    [{ REFWATCH_DEMO: 'yes' }, /REFWATCH_DEMO \(flag --demo\).*on \| off/],
    [
      { REFWATCH_LOG_LEVEL: 'verbose' },
      /REFWATCH_LOG_LEVEL \(flag --log-level\).*accepted: debug \| info \| warn \| error \| silent/,
    ],
    [
      { REFWATCH_NAMESPACES: 'shop,Web_Team' },
      /REFWATCH_NAMESPACES \(flag --namespaces\): namespace "Web_Team" is not a valid namespace.*accepted: comma-separated namespace names/,
    ],
    [{ REFWATCH_NAMESPACES: ' , ' }, /REFWATCH_NAMESPACES \(flag --namespaces\): " , " names no namespace/],
  ])('names the variable, the flag and the accepted values: %o', (env, re) => {
    expect(() => parseConfig(env)).toThrow(re);
  });

  it('maps --namespaces to the namespaces every watch is restricted to', () => {
    expect(flagsToEnv(['--namespaces', 'shop, web,shop'])).toEqual({ REFWATCH_NAMESPACES: 'shop, web,shop' });
    expect(parseConfig({ REFWATCH_NAMESPACES: 'shop, web,shop' }).namespaces).toEqual(['shop', 'web']);
    expect(parseConfig({}).namespaces).toBeUndefined();
  });

  it('parses durations', () => {
    expect(parseDurationMs('250ms', 'x')).toBe(250);
    expect(parseDurationMs('1.5s', 'x')).toBe(1500);
    expect(parseDurationMs('2m', 'x')).toBe(120_000);
    expect(parseDurationMs('1500', 'x')).toBe(1500);
    expect(() => parseDurationMs('-1s', 'x')).toThrow(/x "-1s"/);
  });

  it('maps flags to variables and rejects unknown ones', () => {
    expect(flagsToEnv(['--context', 'prod', '--port=3001'])).toEqual({
      REFWATCH_CONTEXT: 'prod',
      REFWATCH_PORT: '3001',
      REFWATCH_CLUSTER: 'kubeconfig',
    });
    expect(parseConfig(flagsToEnv(['--log-level', 'debug'])).logLevel).toBe('debug');
    expect(parseConfig({}).logLevel).toBe('info');
    expect(() => flagsToEnv(['--colour', 'red'])).toThrow(/unknown flag --colour/);
    expect(() => flagsToEnv(['--context'])).toThrow(/needs a value/);
  });

  it('maps --allowed-hosts and the bare --insecure-allow-anonymous flag', () => {
    expect(
      flagsToEnv(['--host', '0.0.0.0', '--insecure-allow-anonymous', '--allowed-hosts', 'a.example,b.example']),
    ).toEqual({
      REFWATCH_HOST: '0.0.0.0',
      REFWATCH_INSECURE_ALLOW_ANONYMOUS: 'true',
      REFWATCH_ALLOWED_HOSTS: 'a.example,b.example',
    });
    expect(flagsToEnv(['--insecure-allow-anonymous=false'])).toEqual({ REFWATCH_INSECURE_ALLOW_ANONYMOUS: 'false' });
  });
});

describe('serving settings', () => {
  const token = 'x'.repeat(24);

  it('on loopback, reads are open and a token guards changes only', () => {
    expect(parseConfig({})).toMatchObject({
      host: '127.0.0.1',
      allowedHosts: [],
      readsNeedToken: false,
      insecureAllowAnonymous: false,
    });
    expect(parseConfig({ REFWATCH_TOKEN: token, REFWATCH_HOST: 'localhost' })).toMatchObject({
      token,
      readsNeedToken: false,
    });
  });

  it('beyond loopback with a token, reads need it', () => {
    expect(parseConfig({ REFWATCH_HOST: '0.0.0.0', REFWATCH_TOKEN: token })).toMatchObject({
      readsNeedToken: true,
      insecureAllowAnonymous: false,
    });
    expect(
      parseConfig({
        REFWATCH_HOST: '10.0.0.5',
        REFWATCH_TOKEN: token,
        REFWATCH_ALLOWED_HOSTS: ' refwatch.example.com , *.svc.cluster.local ',
      }).allowedHosts,
    ).toEqual(['refwatch.example.com', '*.svc.cluster.local']);
  });

  it('beyond loopback without a token only with --insecure-allow-anonymous', () => {
    expect(parseConfig({ REFWATCH_HOST: '::', REFWATCH_INSECURE_ALLOW_ANONYMOUS: 'true' })).toMatchObject({
      readsNeedToken: false,
      insecureAllowAnonymous: true,
    });
  });

  it.each([
    [
      'a non-loopback bind without a token',
      { REFWATCH_HOST: '0.0.0.0' },
      /REFWATCH_HOST \(flag --host\) 0\.0\.0\.0 is reachable beyond this machine.*REFWATCH_TOKEN \(flag --token\).*REFWATCH_INSECURE_ALLOW_ANONYMOUS=true \(flag --insecure-allow-anonymous\)/,
    ],
    [
      '--insecure-allow-anonymous with a token',
      { REFWATCH_HOST: '0.0.0.0', REFWATCH_TOKEN: token, REFWATCH_INSECURE_ALLOW_ANONYMOUS: 'true' },
      /REFWATCH_INSECURE_ALLOW_ANONYMOUS \(flag --insecure-allow-anonymous\): contradicts REFWATCH_TOKEN \(flag --token\)/,
    ],
    [
      '--insecure-allow-anonymous with a token, on loopback too',
      { REFWATCH_TOKEN: token, REFWATCH_INSECURE_ALLOW_ANONYMOUS: 'true' },
      /contradicts REFWATCH_TOKEN/,
    ],
    [
      'a token shorter than 16 characters',
      { REFWATCH_HOST: '0.0.0.0', REFWATCH_TOKEN: 'short-secret' },
      /REFWATCH_TOKEN \(flag --token\): the token \(12 characters\) is not valid.*at least 16 characters/,
    ],
    [
      'an allowed host with a port',
      { REFWATCH_ALLOWED_HOSTS: 'ok.example,refwatch.example.com:3000' },
      /REFWATCH_ALLOWED_HOSTS \(flag --allowed-hosts\): "refwatch.example.com:3000" has a port/,
    ],
    [
      'an allowed host that is a URL',
      { REFWATCH_ALLOWED_HOSTS: 'https://refwatch.example.com' },
      /REFWATCH_ALLOWED_HOSTS \(flag --allowed-hosts\): .* is a URL/,
    ],
    [
      'an allowed host that is not a name',
      { REFWATCH_ALLOWED_HOSTS: 'ref watch' },
      /REFWATCH_ALLOWED_HOSTS \(flag --allowed-hosts\): "ref watch" is not a host name/,
    ],
    [
      'an allowed host of *',
      { REFWATCH_ALLOWED_HOSTS: '*' },
      /REFWATCH_ALLOWED_HOSTS \(flag --allowed-hosts\): "\*" would allow every host/,
    ],
    ['a bind address that is not one', { REFWATCH_HOST: 'http://0.0.0.0' }, /REFWATCH_HOST \(flag --host\)/],
    [
      'an insecure flag that is not a boolean',
      { REFWATCH_INSECURE_ALLOW_ANONYMOUS: 'yes' },
      /REFWATCH_INSECURE_ALLOW_ANONYMOUS \(flag --insecure-allow-anonymous\).*true \| false/,
    ],
  ])('refuses %s, naming the flag', (_what, env, re) => {
    expect(() => parseConfig(env)).toThrow(re);
  });

  it('under the standalone server, follows the address it binds (HOSTNAME, default 0.0.0.0)', () => {
    const standalone = { __NEXT_PRIVATE_STANDALONE_CONFIG: '{}' };
    expect(() => parseConfig({ ...standalone })).toThrow(
      /REFWATCH_HOST \(flag --host\) 0\.0\.0\.0 is reachable beyond this machine/,
    );
    expect(parseConfig({ ...standalone, REFWATCH_TOKEN: token })).toMatchObject({
      host: '0.0.0.0',
      readsNeedToken: true,
    });
    expect(parseConfig({ ...standalone, HOSTNAME: '127.0.0.1' })).toMatchObject({
      host: '127.0.0.1',
      readsNeedToken: false,
    });
    expect(() =>
      parseConfig({ ...standalone, HOSTNAME: 'refwatch-7d9f-abcde', REFWATCH_HOST: '0.0.0.0', REFWATCH_TOKEN: token }),
    ).toThrow(
      /REFWATCH_HOST \(flag --host\): "0\.0\.0\.0" differs from HOSTNAME "refwatch-7d9f-abcde".*set both to the same address/,
    );
  });

  it('never repeats the token in an error', () => {
    const secret = 'abcdefghijklmno'; // 15 characters: too short
    expect(() => parseConfig({ REFWATCH_TOKEN: secret })).toThrow(/15 characters/);
    try {
      parseConfig({ REFWATCH_TOKEN: secret });
    } catch (e) {
      expect((e as Error).message).not.toContain(secret);
    }
  });
});
