/**
 * The tests' own process helpers clean up after themselves: a process that does not stop in time,
 * or does not start in time, is killed with every process it started, so that no redis-server,
 * PostgreSQL or server of it runs on beside the tests that follow (a bench child that never
 * printed its ready line once left three API servers, a redis-server and a PostgreSQL running).
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { alive } from '../../src/services/child-process.js';
import { killProcessTree } from '../support/process-tree.js';
import { spawnTsProcess } from '../support/processes.js';
import { waitFor } from '../support/wait.js';

const SCRIPT = 'test/fixtures/processes/starts-a-child.mjs';
const childPid = (output: string) => Number(/child (\d+)/.exec(output)?.[1]);

describe('test processes', () => {
  it('killProcessTree kills a process and the process it started', async () => {
    const parent = spawn(process.execPath, [SCRIPT], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    parent.stdout!.on('data', (d) => (out += d));
    const child = await waitFor(() => childPid(out), { message: 'the script started its child' });
    expect(alive(child)).toBe(true);

    const killed = killProcessTree(parent.pid!);
    expect(killed).toEqual([parent.pid, child]);
    await waitFor(() => parent.signalCode === 'SIGKILL', { message: 'the parent was killed' });
    await waitFor(() => !alive(child), { message: 'its child was killed' });
  });

  it('stop() that runs out of time kills the process with what it started', async () => {
    const p = await spawnTsProcess(SCRIPT, [], {}, { name: 'starts-a-child', ready: (out) => childPid(out) > 0 });
    const child = childPid(p.output());
    expect(alive(child)).toBe(true);

    // SIGTERM is ignored: after 200 ms the SIGKILL goes to the tree.
    expect(await p.stop(200)).toBeNull();
    expect(p.output()).toContain('SIGTERM ignored');
    await waitFor(() => !alive(child), { message: 'the child of the process that would not stop was killed' });
  });

  it('a start that runs out of time kills the process with what it started', async () => {
    let seen = 0;
    const start = spawnTsProcess(
      SCRIPT,
      ['never-ready'],
      {},
      {
        name: 'starts-a-child',
        // Never ready. The script names its child first thing (plain node, ~0.1 s); 3 s leaves a busy machine room.
        ready: (out) => {
          seen = childPid(out) || seen;
          return false;
        },
        startTimeoutMs: 3_000,
      },
    );
    await expect(start).rejects.toThrow(/starts-a-child did not start/);
    expect(seen).toBeGreaterThan(0);
    await waitFor(() => !alive(seen), { message: 'the child of the process that did not start was killed' });
  });
});
