import { describe, expect, it } from 'vitest';
import { HostAllowList, hostEntryProblem, hostnameOf, isLoopback } from '@/server/http/hosts';

const podInterfaces = {
  lo: [
    {
      address: '127.0.0.1',
      netmask: '255.0.0.0',
      family: 'IPv4',
      mac: '00:00:00:00:00:00',
      internal: true,
      cidr: '127.0.0.1/8',
    },
  ],
  eth0: [
    {
      address: '10.244.1.7',
      netmask: '255.255.255.0',
      family: 'IPv4',
      mac: '0a:58:0a:f4:01:07',
      internal: false,
      cidr: '10.244.1.7/24',
    },
    {
      address: 'fd00::7',
      netmask: 'ffff:ffff:ffff:ffff::',
      family: 'IPv6',
      mac: '0a:58:0a:f4:01:07',
      internal: false,
      cidr: 'fd00::7/64',
      scopeid: 0,
    },
  ],
} as const;

describe('hostnameOf', () => {
  it.each([
    ['localhost:3000', 'localhost'],
    ['LOCALHOST', 'localhost'],
    ['127.0.0.1:3000', '127.0.0.1'],
    ['[::1]:3000', '[::1]'],
    ['[0:0:0:0:0:0:0:1]', '[::1]'],
    ['refwatch.example.com.', 'refwatch.example.com'],
  ])('reads %s as %s', (header, name) => {
    expect(hostnameOf(header)).toBe(name);
  });

  it.each([null, '', 'evil.example@127.0.0.1', '127.0.0.1/x', 'a b', 'http://127.0.0.1'])(
    'refuses %o as a Host header',
    (header) => {
      expect(hostnameOf(header)).toBeUndefined();
    },
  );
});

describe('isLoopback', () => {
  it.each(['localhost', '127.0.0.1', '127.8.9.10', '::1', '[::1]'])('%s is loopback', (h) =>
    expect(isLoopback(h)).toBe(true),
  );
  it.each(['0.0.0.0', '::', '10.0.0.1', 'example.com', '128.0.0.1', 'localhost.evil.example'])('%s is not', (h) =>
    expect(isLoopback(h)).toBe(false),
  );
});

describe('HostAllowList', () => {
  it('allows loopback names on any port and nothing else by default', () => {
    const list = new HostAllowList('127.0.0.1', []);
    for (const h of ['localhost:3000', '127.0.0.1:3000', '127.0.0.2', '[::1]:3000', 'localhost'])
      expect(list.allows(h), h).toBe(true);
    for (const h of [
      'evil.example:3000',
      'evil.example',
      '10.0.0.1:3000',
      null,
      'evil.example@127.0.0.1:3000',
      '127.0.0.1.evil.example',
    ])
      expect(list.allows(h), String(h)).toBe(false);
  });

  it('allows the bound address, and every interface address when bound to a wildcard', () => {
    expect(new HostAllowList('192.168.1.5', []).allows('192.168.1.5:3000')).toBe(true);
    const wildcard = new HostAllowList('0.0.0.0', [], podInterfaces);
    expect(wildcard.allows('10.244.1.7:3000')).toBe(true);
    expect(wildcard.allows('[fd00::7]:3000')).toBe(true);
    expect(wildcard.allows('10.244.1.8:3000')).toBe(false);
    expect(new HostAllowList('::', [], podInterfaces).allows('10.244.1.7')).toBe(true);
  });

  it('allows the names given, exactly or below a *. suffix', () => {
    const list = new HostAllowList('127.0.0.1', ['refwatch.example.com', '*.svc.cluster.local', 'fd00::1']);
    expect(list.allows('refwatch.example.com:8080')).toBe(true);
    expect(list.allows('REFWATCH.example.com')).toBe(true);
    expect(list.allows('refwatch.tools.svc.cluster.local')).toBe(true);
    expect(list.allows('[fd00::1]:3000')).toBe(true);
    expect(list.allows('svc.cluster.local')).toBe(false);
    expect(list.allows('evilsvc.cluster.local')).toBe(false);
    expect(list.allows('refwatch.example.com.evil.example')).toBe(false);
  });
});

describe('hostEntryProblem', () => {
  it.each(['refwatch.example.com', '*.example.com', '10.0.0.5', 'fd00::1', '[fd00::1]', 'refwatch'])(
    'accepts %s',
    (e) => expect(hostEntryProblem(e)).toBeUndefined(),
  );
  it.each([
    ['http://refwatch.example.com', /is a URL/],
    ['refwatch.example.com:3000', /has a port/],
    ['*', /every host/],
    ['under_score.example', /not a host name/],
    ['-bad.example', /not a host name/],
    ['300.1.1.1', /not an IPv4 address/],
    ['fd00::zz', /not an IPv6 address/],
  ])('refuses %s', (e, re) => expect(hostEntryProblem(e)).toMatch(re));
});
