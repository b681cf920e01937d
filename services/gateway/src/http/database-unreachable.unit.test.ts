import { describe, expect, it } from 'vitest';
import { isDatabaseUnreachable } from './database-unreachable';

const withCode = (code: string, message = 'failed') => Object.assign(new Error(message), { code });

describe('isDatabaseUnreachable', () => {
  it.each([
    ['a refused connection', withCode('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')],
    ['a reset connection', withCode('ECONNRESET')],
    ['an admin shutdown', withCode('57P01', 'terminating connection due to administrator command')],
    ['a server starting up', withCode('57P03', 'the database system is starting up')],
    ['a connection exception', withCode('08006')],
    ['a cut connection', new Error('Connection terminated unexpectedly')],
    ['a connect timeout', new Error('Connection terminated due to connection timeout')],
    ['a pool timeout', new Error('timeout exceeded when trying to connect')],
    [
      'a broken client',
      new Error('Client has encountered a connection error and is not queryable'),
    ],
    ['a closed PGlite', new Error('PGlite is closed')],
    ['a wrapped cause', new Error('query failed', { cause: withCode('ECONNREFUSED') })],
    [
      'every address refused',
      new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')], 'all failed'),
    ],
  ])('is true for %s', (_what, error) => {
    expect(isDatabaseUnreachable(error)).toBe(true);
  });

  it.each([
    ['a unique violation', withCode('23505')],
    ['a syntax error', withCode('42601')],
    ['a statement timeout', withCode('57014', 'canceling statement due to statement timeout')],
    ['a plain error', new Error('connection to 10.0.0.7 refused: password=hunter2')],
    ['a non-error', 'ECONNREFUSED'],
    ['nothing', undefined],
  ])('is false for %s', (_what, error) => {
    expect(isDatabaseUnreachable(error)).toBe(false);
  });
});
