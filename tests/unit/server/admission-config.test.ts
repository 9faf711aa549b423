import { describe, expect, it } from 'vitest';
import { flagsToEnv, parseConfig } from '@/server/config';

describe('admission settings', () => {
  it('are off unless --admission-listen is given', () => {
    expect(parseConfig({}).admission).toBeUndefined();
  });

  it('read the listener, the TLS files and the grace from flags', () => {
    const env = flagsToEnv([
      '--admission-listen',
      '0.0.0.0:8443',
      '--admission-tls-cert=/tls/tls.crt',
      '--admission-tls-key=/tls/tls.key',
      '--admission-grace',
      '1m',
    ]);
    expect(parseConfig(env).admission).toEqual({
      host: '0.0.0.0',
      port: 8443,
      certFile: '/tls/tls.crt',
      keyFile: '/tls/tls.key',
      graceMs: 60_000,
    });
    expect(parseConfig({ REFWATCH_ADMISSION_LISTEN: '[::1]:9443' }).admission).toEqual({
      host: '::1',
      port: 9443,
      graceMs: 30_000,
    });
  });

  it('name the flag and the fix for bad input', () => {
    expect(() => parseConfig({ REFWATCH_ADMISSION_LISTEN: '8443' })).toThrow(
      /REFWATCH_ADMISSION_LISTEN \(flag --admission-listen\): "8443" is not host:port/,
    );
    expect(() => parseConfig({ REFWATCH_ADMISSION_LISTEN: ':8443', REFWATCH_ADMISSION_TLS_CERT: '/c' })).toThrow(
      /REFWATCH_ADMISSION_TLS_KEY \(flag --admission-tls-key\): is missing: give both/,
    );
    expect(() => parseConfig({ REFWATCH_ADMISSION_TLS_CERT: '/c' })).toThrow(
      /is set but the webhook is off; add --admission-listen/,
    );
    expect(() =>
      parseConfig({ REFWATCH_ADMISSION_LISTEN: '127.0.0.1:8443', REFWATCH_ADMISSION_GRACE: 'soon' }),
    ).toThrow(/REFWATCH_ADMISSION_GRACE \(flag --admission-grace\)/);
  });
});
