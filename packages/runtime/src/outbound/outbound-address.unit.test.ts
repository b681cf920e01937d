import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { outboundEnv } from '../env-schema';
import {
  isAddressAllowed,
  isPublicAddress,
  isRefusedHost,
  namesHost,
  parseOutboundAllowlist,
} from './outbound-address';

const none = parseOutboundAllowlist([]);
const hostOf = (url: string) => new URL(url).hostname;

/** URLs a tenant could name to reach the worker's own network, in every spelling. */
const refusedUrls = [
  'http://169.254.169.254/latest/meta-data/',
  'http://127.0.0.1:8080/hook',
  'http://127.255.255.254/',
  'http://10.0.0.1/',
  'http://172.16.0.1/',
  'http://172.31.255.255/',
  'http://192.168.1.1/',
  'http://100.64.0.1/',
  'http://100.127.255.255/',
  'http://0.0.0.0/',
  'http://0/',
  'http://224.0.0.1/',
  'http://239.255.255.250/',
  'http://240.0.0.1/',
  'http://255.255.255.255/',
  'http://192.0.2.1/',
  'http://198.18.0.1/',
  'http://0x7f.0.0.1/',
  'http://0x7f000001/',
  'http://2130706433/',
  'http://017700000001/',
  'http://0177.1/',
  'http://127.1/',
  'http://127.0.0.1./',
  'http://%31%32%37.0.0.1/',
  'http://[::1]/',
  'http://[::]/',
  'http://[0:0:0:0:0:0:0:1]/',
  'http://[::ffff:127.0.0.1]/',
  'http://[::ffff:7f00:1]/',
  'http://[0:0:0:0:0:ffff:169.254.169.254]/',
  'http://[::ffff:10.0.0.1]/',
  'http://[::127.0.0.1]/',
  'http://[::8.8.8.8]/',
  'http://[::ffff:0:7f00:1]/',
  'http://[64:ff9b::7f00:1]/',
  'http://[64:ff9b::a9fe:a9fe]/',
  'http://[64:ff9b:1::1]/',
  'http://[2002:7f00:1::1]/',
  'http://[2002:a9fe:a9fe::]/',
  'http://[fe80::1]/',
  'http://[febf::1]/',
  'http://[fec0::1]/',
  'http://[fc00::1]/',
  'http://[fd12:3456::1]/',
  'http://[ff02::1]/',
  'http://[100::1]/',
  'http://[2001::1]/',
  'http://[2001:db8::1]/',
  'http://[3fff::1]/',
  'http://localhost:3000/',
  'http://LOCALHOST./',
  'http://api.localhost/',
];

const publicUrls = [
  'https://example.com/hook',
  'https://hooks.example.test/x',
  'http://93.184.215.14/',
  'http://8.8.8.8/',
  'http://100.128.0.1/',
  'http://172.32.0.1/',
  'http://[2606:4700:4700::1111]/',
  'http://[::ffff:8.8.8.8]/',
  'http://[64:ff9b::808:808]/',
  'http://[2002:808:808::1]/',
];

describe('isRefusedHost', () => {
  it.each(refusedUrls)('refuses %s', (url) => {
    expect(isRefusedHost(hostOf(url), none)).toBe(true);
  });

  it.each(publicUrls)('lets %s through (a name is judged when it is resolved)', (url) => {
    expect(isRefusedHost(hostOf(url), none)).toBe(false);
  });

  it("counts on WHATWG URL parsing for IPv4's odd spellings: they come out as dotted quads", () => {
    for (const url of [
      'http://0x7f.0.0.1/',
      'http://2130706433/',
      'http://017700000001/',
      'http://127.1/',
    ]) {
      expect(hostOf(url)).toBe('127.0.0.1');
    }
    expect(hostOf('http://[::ffff:127.0.0.1]/')).toBe('[::ffff:7f00:1]');
  });

  it('lets through what the allowlist names, by host name, address or network', () => {
    const allowlist = parseOutboundAllowlist([
      '127.0.0.1/32',
      '10.0.0.0/8',
      'fd00::/8',
      'hooks.internal',
      '*.corp.example',
      'localhost',
    ]);
    for (const url of [
      'http://127.0.0.1:9999/',
      'http://[::ffff:127.0.0.1]/',
      'http://0x7f.0.0.1/',
      'http://10.20.30.40/',
      'http://[fd12::1]/',
      'http://localhost:3000/',
    ]) {
      expect(isRefusedHost(hostOf(url), allowlist), url).toBe(false);
    }
    for (const url of ['http://127.0.0.2/', 'http://[::1]/', 'http://169.254.169.254/']) {
      expect(isRefusedHost(hostOf(url), allowlist), url).toBe(true);
    }
    expect(namesHost(allowlist, 'hooks.internal')).toBe(true);
    expect(namesHost(allowlist, 'HOOKS.internal.')).toBe(true);
    expect(namesHost(allowlist, 'a.b.corp.example')).toBe(true);
    expect(namesHost(allowlist, 'corp.example')).toBe(false);
    expect(namesHost(allowlist, 'evilcorp.example')).toBe(false);
    expect(namesHost(allowlist, '[::ffff:10.1.2.3]')).toBe(true);
  });

  it('matches a host exactly whatever its case and port, and *.domain below the domain only', () => {
    const hostFilter = (url: string, entries: string[]) => {
      const allowlist = parseOutboundAllowlist(entries);
      return allowlist.anyHost || namesHost(allowlist, hostOf(url));
    };
    expect(hostFilter('http://10.0.0.1:8080/mcp', ['*'])).toBe(true);
    expect(hostFilter('https://mcp.example.com/mcp', [])).toBe(false);
    expect(hostFilter('https://MCP.example.com:8443/mcp', ['mcp.example.com'])).toBe(true);
    expect(hostFilter('https://mcp.example.com.evil.net/mcp', ['mcp.example.com'])).toBe(false);
    expect(hostFilter('http://[::1]:3000/mcp', ['::1'])).toBe(true);
    expect(hostFilter('https://a.tools.example.com/mcp', ['*.example.com'])).toBe(true);
    expect(hostFilter('https://example.com/mcp', ['*.example.com'])).toBe(false);
    expect(hostFilter('https://notexample.com/mcp', ['*.example.com'])).toBe(false);
  });

  it('takes `*` as any host name, naming none: its addresses stay guarded', () => {
    const any = parseOutboundAllowlist(['*']);
    expect(any.anyHost).toBe(true);
    expect(namesHost(any, 'mcp.example.com')).toBe(false);
    expect(isRefusedHost('127.0.0.1', any)).toBe(true);
    expect(isRefusedHost('mcp.example.com', any)).toBe(false);
  });
});

describe('isPublicAddress and isAddressAllowed (the addresses a lookup answers)', () => {
  it('judges resolved addresses, IPv4-mapped ones as their IPv4 address', () => {
    for (const address of [
      '127.0.0.1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::1',
      '::',
      '10.1.1.1',
      '169.254.169.254',
      'fe80::1',
      'fe80::1%eth0',
      '[::1]',
      'not an address',
      '',
    ]) {
      expect(isPublicAddress(address), address).toBe(false);
    }
    for (const address of ['93.184.215.14', '2606:4700:4700::1111', '::ffff:93.184.215.14']) {
      expect(isPublicAddress(address), address).toBe(true);
    }
  });

  it('allows the addresses inside the allowlist networks, and no other private one', () => {
    const allowlist = parseOutboundAllowlist(['127.0.0.1/32', '192.168.0.0/16', '::1']);
    expect(isAddressAllowed('127.0.0.1', allowlist)).toBe(true);
    expect(isAddressAllowed('::ffff:127.0.0.1', allowlist)).toBe(true);
    expect(isAddressAllowed('127.0.0.2', allowlist)).toBe(false);
    expect(isAddressAllowed('192.168.77.1', allowlist)).toBe(true);
    expect(isAddressAllowed('::1', allowlist)).toBe(true);
    expect(isAddressAllowed('10.0.0.1', allowlist)).toBe(false);
    expect(isAddressAllowed('8.8.8.8', allowlist)).toBe(true);
    expect(isAddressAllowed('not an address', allowlist)).toBe(false);
  });
});

describe('parseOutboundAllowlist', () => {
  it('refuses what is neither a host name, an address nor a CIDR', () => {
    for (const bad of [
      '10.0.0.0/33',
      '10.0.0.0/8/1',
      '999.1.1.1/8',
      'fd00::/129',
      '10.0.0.0/x',
      'http://hooks.internal',
      'hooks.internal:8080',
      'a b',
    ]) {
      expect(() => parseOutboundAllowlist([bad]), bad).toThrow(bad);
    }
  });

  it('reads host names, patterns, addresses and networks, blanks skipped', () => {
    const allowlist = parseOutboundAllowlist([' Hooks.Internal. ', '', '*.example.com', '[::1]']);
    expect(allowlist.hosts).toEqual(['hooks.internal', '*.example.com']);
    expect(allowlist.anyHost).toBe(false);
    expect(allowlist.networks.check('::1', 'ipv6')).toBe(true);
  });
});

describe('outboundEnv', () => {
  const schema = z.object(outboundEnv);

  it('defaults to no webhook allowlist and any MCP host', () => {
    expect(schema.parse({})).toEqual({ WEBHOOK_ALLOWED_HOSTS: [], MCP_TAB_HOSTS: ['*'] });
  });

  it('reads comma-separated entries, and refuses bad ones and a webhook `*`', () => {
    expect(
      schema.parse({ WEBHOOK_ALLOWED_HOSTS: '10.0.0.0/8, hooks.internal', MCP_TAB_HOSTS: '*,::1' }),
    ).toEqual({
      WEBHOOK_ALLOWED_HOSTS: ['10.0.0.0/8', 'hooks.internal'],
      MCP_TAB_HOSTS: ['*', '::1'],
    });
    expect(schema.safeParse({ WEBHOOK_ALLOWED_HOSTS: '*' }).success).toBe(false);
    expect(schema.safeParse({ WEBHOOK_ALLOWED_HOSTS: '10.0.0.0/40' }).success).toBe(false);
    expect(schema.safeParse({ MCP_TAB_HOSTS: 'https://mcp.example.com' }).success).toBe(false);
  });
});
