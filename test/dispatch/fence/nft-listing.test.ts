// The kernel's refusals as nft lists them (nft.ts, parseRefused): a machine without
// /etc/protocols (the runner image's minimal Debian) lists protocols by number, and the leg's log
// still says tcp and udp.
import { describe, expect, it } from 'vitest';
import { parseRefused } from '../../../src/dispatch/fence/leg-rules.js';

const listing = (elements: string) =>
  `table inet svc_7 {\n\tset r4_65520 {\n\t\ttype ipv4_addr . inet_proto . inet_service\n\t\tsize 4096\n\t\tflags dynamic\n\t\telements = { ${elements} }\n\t}\n}\n`;

describe('the refusals read from a leg set', () => {
  it('names the protocol whether nft printed its name or its number', () => {
    const how = (proto: string) => `kernel: ${proto}, not through the proxy`;
    expect(parseRefused(listing('127.0.0.1 . 6 . 8787, 10.88.0.1 . 17 . 53'))).toEqual([
      { host: '127.0.0.1', port: 8787, how: how('tcp') },
      { host: '10.88.0.1', port: 53, how: how('udp') },
    ]);
    expect(parseRefused(listing('127.0.0.3 . tcp . 80'))).toEqual([{ host: '127.0.0.3', port: 80, how: how('tcp') }]);
  });
});
