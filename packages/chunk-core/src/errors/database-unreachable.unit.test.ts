import { describe, expect, it } from 'vitest';
import { isDatabaseUnreachable } from './database-unreachable';
import { ConflictError, NotFoundError } from './errors';

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe('isDatabaseUnreachable', () => {
  it('knows a server that is down, restarting or cut off', () => {
    expect(
      isDatabaseUnreachable(withCode('connect ECONNREFUSED 127.0.0.1:5432', 'ECONNREFUSED')),
    ).toBe(true);
    expect(isDatabaseUnreachable(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isDatabaseUnreachable(withCode('the database system is starting up', '57P03'))).toBe(
      true,
    );
    expect(isDatabaseUnreachable(withCode('terminating connection', '57P01'))).toBe(true);
    expect(isDatabaseUnreachable(withCode('connection failure', '08006'))).toBe(true);
    expect(isDatabaseUnreachable(new AggregateError([withCode('x', 'ECONNREFUSED')]))).toBe(true);
    expect(
      isDatabaseUnreachable(new Error('wrapped', { cause: withCode('x', 'ECONNRESET') })),
    ).toBe(true);
  });

  it('knows the timeouts and closed clients of node-postgres and PGlite', () => {
    for (const message of [
      'Connection terminated due to connection timeout',
      'timeout exceeded when trying to connect',
      'Client has encountered a connection error and is not queryable',
      'PGlite is closed',
    ]) {
      expect(isDatabaseUnreachable(new Error(message)), message).toBe(true);
    }
  });

  it('leaves answers and bugs alone', () => {
    expect(isDatabaseUnreachable(new NotFoundError('tab not found'))).toBe(false);
    expect(isDatabaseUnreachable(new ConflictError('expected seq 3'))).toBe(false);
    expect(isDatabaseUnreachable(withCode('syntax error', '42601'))).toBe(false);
    expect(isDatabaseUnreachable(new TypeError('undefined is not a function'))).toBe(false);
    expect(isDatabaseUnreachable('ECONNREFUSED')).toBe(false);
    // A statement that ran too long is not an outage; nor is a message that merely says "refused".
    expect(
      isDatabaseUnreachable(withCode('canceling statement due to statement timeout', '57014')),
    ).toBe(false);
    expect(isDatabaseUnreachable(new Error('connection to 10.0.0.7 refused'))).toBe(false);
  });
});
