// Which GitHub repository a remote names, and where its API is.
import { describe, expect, it } from 'vitest';
import { apiBaseFor, compareUrl, parseRemote } from '../../../src/dispatch/pr/remote.js';

describe('parseRemote', () => {
  it.each([
    ['https://github.com/acme/shop.git', 'github.com', 'acme', 'shop'],
    ['https://github.com/acme/shop', 'github.com', 'acme', 'shop'],
    ['git@github.com:acme/shop.git', 'github.com', 'acme', 'shop'],
    ['ssh://git@GHE.Example.com:2222/acme/shop.git', 'ghe.example.com', 'acme', 'shop'],
    ['http://127.0.0.1:8787/git/acme/shop.git', '127.0.0.1:8787', 'acme', 'shop'],
  ])('%s', (url, host, owner, name) => {
    expect(parseRemote(url)).toMatchObject({ host, owner, name, webUrl: `https://${host}/${owner}/${name}` });
  });

  it.each(['/srv/git/shop.git', 'file:///srv/shop', 'https://github.com/only-owner', 'not a url'])('%s names no repository', (url) => {
    expect(parseRemote(url)).toBeNull();
  });
});

describe('apiBaseFor and compareUrl', () => {
  it('github.com has api.github.com; any other host is GitHub Enterprise Server', () => {
    expect(apiBaseFor('github.com')).toBe('https://api.github.com');
    expect(apiBaseFor('GHE.example.com')).toBe('https://ghe.example.com/api/v3');
  });
  it('the compare page keeps slashes of branch names', () => {
    const r = parseRemote('git@github.com:acme/shop.git')!;
    expect(compareUrl(r, 'svc/P-1', 'main')).toBe('https://github.com/acme/shop/compare/main...svc/P-1?expand=1');
    expect(compareUrl(r, 'svc/P-1', null)).toBe('https://github.com/acme/shop/compare/svc/P-1?expand=1');
  });
});
