import { describe, expect, it } from 'vitest';
import { isAllowedHost } from './allowed-host';

describe('isAllowedHost', () => {
  it('allows any host with *, and none with no pattern', () => {
    expect(isAllowedHost('http://10.0.0.1:8080/mcp', ['*'])).toBe(true);
    expect(isAllowedHost('https://mcp.example.com/mcp', [])).toBe(false);
  });

  it('matches a host exactly, whatever its case and port', () => {
    expect(isAllowedHost('https://MCP.example.com:8443/mcp', ['mcp.example.com'])).toBe(true);
    expect(isAllowedHost('https://mcp.example.com.evil.net/mcp', ['mcp.example.com'])).toBe(false);
    expect(isAllowedHost('http://[::1]:3000/mcp', ['::1'])).toBe(true);
  });

  it('matches the hosts under a domain with *.domain, not the domain itself', () => {
    expect(isAllowedHost('https://a.tools.example.com/mcp', ['*.example.com'])).toBe(true);
    expect(isAllowedHost('https://example.com/mcp', ['*.example.com'])).toBe(false);
    expect(isAllowedHost('https://notexample.com/mcp', ['*.example.com'])).toBe(false);
  });
});
