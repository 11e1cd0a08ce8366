import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { lockGoneJobId, WorkerErrorLog } from './worker-error-log.js';

function capture() {
  const lines: { level: number; msg: string }[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n')) if (line) lines.push(JSON.parse(line) as { level: number; msg: string });
      done();
    },
  });
  return { log: new WorkerErrorLog(pino({ level: 'debug' }, sink)), levels: () => lines.map((l) => l.level) };
}

const DEBUG = 20;
const WARN = 40;
const ERROR = 50;

describe('WorkerErrorLog', () => {
  it('finds the job of each message that says its lock is gone', () => {
    expect(lockGoneJobId('could not renew lock for job ip1-0a1b')).toBe('ip1-0a1b');
    expect(lockGoneJobId('Missing lock for job 42. moveToFinished')).toBe('42');
    expect(lockGoneJobId('Lock mismatch for job result-ip3-x. Cmd moveToFinished from active')).toBe('result-ip3-x');
    expect(lockGoneJobId('Job 7 is not in the active state. moveToFinished')).toBe('7');
    expect(lockGoneJobId('Missing key for job 7. moveToFinished')).toBeUndefined();
    expect(lockGoneJobId('ERR unknown command')).toBeUndefined();
  });

  it('logs Redis unreachable at debug and the unforeseen at error', () => {
    const { log, levels } = capture();
    log.log(new Error('Connection is closed.'), 'q');
    log.log(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' }), 'q');
    log.log(new Error('Missing key for job 7. moveToFinished'), 'q');
    expect(levels()).toEqual([DEBUG, DEBUG, ERROR]);
  });

  it('warns of a lost lock once per job, whatever the runs and messages after it', () => {
    const { log, levels } = capture();
    log.log(new Error('could not renew lock for job a'), 'q');
    log.log(new Error('could not renew lock for job a'), 'q');
    log.started('a');
    log.log(new Error('Missing lock for job a. moveToFinished'), 'q');
    log.log(new Error('Lock mismatch for job b. Cmd moveToFinished from active'), 'q');
    expect(levels()).toEqual([WARN, DEBUG, DEBUG, WARN]);
  });

  it('expects a lock to go for a job handed back, until that job runs again, and for every job during a stop', () => {
    const { log, levels } = capture();
    log.handingBack('a');
    log.log(new Error('could not renew lock for job a'), 'q');
    log.started('a');
    log.log(new Error('could not renew lock for job a'), 'q');
    log.stop();
    log.log(new Error('could not renew lock for job c'), 'q');
    log.log(new Error('ERR something else'), 'q');
    expect(levels()).toEqual([DEBUG, WARN, DEBUG, ERROR]);
  });
});
