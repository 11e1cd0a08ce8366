import { describe, expect, it } from 'vitest';
import { isDatabaseUnavailable } from './database-unavailable.js';

const prismaError = (code: string, cause: Record<string, unknown>) =>
  Object.assign(new Error('Invalid `prisma.x()` invocation'), { code, meta: { driverAdapterError: { name: 'DriverAdapterError', cause } } });

describe('isDatabaseUnavailable', () => {
  it.each([
    // pg and pg-pool
    [{ code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:5432' }, true],
    [{ code: 'ENOTFOUND', message: 'getaddrinfo ENOTFOUND db' }, true],
    [{ code: 'EHOSTUNREACH', message: 'connect EHOSTUNREACH' }, true],
    [{ code: '57P01', message: 'terminating connection due to administrator command' }, true],
    [{ code: '57P03', message: 'the database system is starting up' }, true],
    [{ code: '08006', message: 'connection failure' }, true],
    [{ code: '53300', message: 'sorry, too many clients already' }, true],
    [new Error('Connection terminated unexpectedly'), true],
    [new Error('timeout exceeded when trying to connect'), true],
    [new Error('Connection terminated due to connection timeout'), true],
    [new Error('Query read timeout'), true],
    [new Error('Client was closed and is not queryable'), true],
    [new Error('Client has encountered a connection error and is not queryable'), true],
    [new Error('Cannot use a pool after calling end on the pool'), true],
    // Prisma over adapter-pg
    [{ code: 'P1001', message: "Can't reach database server at 127.0.0.1:1" }, true],
    [{ code: 'P1017', message: 'Server has closed the connection.' }, true],
    [prismaError('P2010', { kind: 'DatabaseNotReachable', host: '127.0.0.1', port: 1 }), true],
    [prismaError('P2010', { kind: 'ConnectionClosed' }), true],
    [prismaError('P2010', { kind: 'TooManyConnections', cause: 'sorry, too many clients already' }), true],
    [prismaError('P2010', { kind: 'postgres', code: '57P01', originalCode: '57P01', message: 'terminating connection' }), true],
    [Object.assign(new Error('connect failed'), { name: 'DriverAdapterError' }), true],
    [Object.assign(new Error('outer'), { cause: Object.assign(new Error('inner'), { code: 'ECONNRESET' }) }), true],
    // Not outages: a refused statement, a busy pool, Redis, nothing
    [{ code: '23505', message: 'duplicate key value' }, false],
    [{ code: '42P01', message: 'relation "titles" does not exist' }, false],
    [prismaError('P2002', { kind: 'UniqueConstraintViolation' }), false],
    [prismaError('P2010', { kind: 'postgres', code: '42601', message: 'syntax error' }), false],
    [{ code: 'P2024', message: 'Timed out fetching a new connection from the connection pool' }, false],
    [new Error('Connection is closed.'), false],
    [new Error('something else'), false],
    ['ECONNREFUSED', false],
    [undefined, false],
    [null, false],
  ])('%o → %s', (err, expected) => {
    expect(isDatabaseUnavailable(err)).toBe(expected);
  });
});
