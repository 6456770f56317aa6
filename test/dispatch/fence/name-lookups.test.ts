// Whether a fenced leg's programs may look listed names up themselves (docs/trust.md, "The
// network of a leg"): only where every lookup is /etc/hosts or UDP DNS, which the fence sends to
// the leg's resolver; and what /etc/hosts says of a listed name.
import { describe, expect, it } from 'vitest';
import { Allowlist } from '../../../src/dispatch/fence/allowlist.js';
import { listedAddresses } from '../../../src/dispatch/fence/direct.js';
import { directNames, hostsFileAnswers, type LookupFiles, lookupsReachResolver, readLookupFiles } from '../../../src/dispatch/fence/name-lookups.js';

const files = (over: Partial<LookupFiles>): LookupFiles => ({
  nsswitch: 'hosts: files dns\n',
  resolvConf: 'nameserver 10.0.0.2\n',
  hosts: '',
  nscd: false,
  ...over,
});

describe('lookupsReachResolver', () => {
  it.each([
    ['files and dns', 'hosts:          files dns', true],
    ['with myhostname and actions', 'passwd: files\nhosts: files myhostname [NOTFOUND=return] dns # comment', true],
    ['no hosts line (glibc: dns, files)', 'passwd: files', true],
    ['no nsswitch.conf at all', null, true],
    ['systemd-resolved over its socket', 'hosts: mymachines resolve [!UNAVAIL=return] files myhostname dns', false],
    ['mDNS', 'hosts: files mdns4_minimal [NOTFOUND=return] dns', false],
    ['LDAP through sssd', 'hosts: files sss dns', false],
    ['a commented-out resolve', '# hosts: resolve\nhosts: files dns', true],
  ])('%s', (_why, nsswitch, expected) => {
    expect(lookupsReachResolver(files({ nsswitch }))).toBe(expected);
  });

  it('is false where nscd answers, or DNS goes over TCP', () => {
    expect(lookupsReachResolver(files({ nscd: true }))).toBe(false);
    expect(lookupsReachResolver(files({ resolvConf: 'nameserver 10.0.0.2\noptions ndots:1 use-vc\n' }))).toBe(false);
    expect(lookupsReachResolver(files({ resolvConf: 'options tcp\n' }))).toBe(false);
    expect(lookupsReachResolver(files({ resolvConf: 'nameserver 10.0.0.2\noptions ndots:5 timeout:1\n' }))).toBe(true);
  });

  it("reads this machine's files", () => {
    const here = readLookupFiles();
    expect(here.hosts).toContain('localhost');
    expect(typeof here.nscd).toBe('boolean');
  });
});

describe('hostsFileAnswers', () => {
  const hosts = [
    '127.0.0.1\tlocalhost',
    '::1 localhost ip6-localhost',
    '203.0.113.9  API.Example.com  mirror.example.com # the mirror',
    '# 198.51.100.1 api.example.com',
    '198.51.100.2 api.example.com.',
    'not-an-address api.example.com',
  ].join('\n');

  it('gives the IPv4 addresses of the names asked for, canonical, each once', () => {
    expect(hostsFileAnswers(hosts, ['api.example.com', 'localhost', 'other.example.com'])).toEqual(
      new Map([
        ['localhost', ['127.0.0.1']],
        ['api.example.com', ['203.0.113.9', '198.51.100.2']],
      ]),
    );
    expect(hostsFileAnswers(null, ['api.example.com'])).toEqual(new Map());
  });
});

describe('directNames', () => {
  const of = (texts: string[], f: LookupFiles) => {
    const list = Allowlist.parse(texts);
    return directNames(list, listedAddresses(list), f);
  };
  const hosts = ['127.0.0.1 localhost', '203.0.113.9 api.example.com mirror.example.com', '10.1.2.3 db.example.com'].join('\n');

  it("names every listed name for NO_PROXY and opens what /etc/hosts says of them, public addresses on the name's ports", () => {
    const d = of(['api.example.com:443', 'mirror.example.com:443', '*.cdn.example', 'db.example.com:5432', 'localhost', '198.51.100.4'], files({ hosts }));
    expect(d.noProxy).toEqual(['api.example.com', 'mirror.example.com', '.cdn.example', 'db.example.com', 'localhost']);
    // The alias opens its address once; an inside answer (db, localhost) opens nothing, as the resolver's would not.
    expect(d.opened).toEqual([{ address: '203.0.113.9', port: 443 }]);
  });

  it('opens an inside address only where it is listed itself, and then through the list', () => {
    expect(of(['db.example.com:5432', '10.1.2.3:5432'], files({ hosts })).opened).toEqual([]);
  });

  it("names nothing where lookups may miss the leg's resolver", () => {
    expect(of(['api.example.com:443'], files({ hosts, nsswitch: 'hosts: files resolve dns' }))).toEqual({ noProxy: [], opened: [] });
  });
});
