import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { RedisClient } from './connection.js';
import { FirstConnect } from './first-connect.js';

/** A connection as waitForReady sees it: a status and a 'ready' event. */
class Connection extends EventEmitter {
  constructor(public status: string) {
    super();
  }
  becomeReady() {
    this.status = 'ready';
    this.emit('ready');
  }
}
const asClient = (c: Connection) => c as unknown as RedisClient;

describe('FirstConnect', () => {
  it('runs commands at once on a connection that is ready', async () => {
    const first = new FirstConnect(asClient(new Connection('ready')), 1000);
    expect(first.whenReady()).toBeUndefined();
    await expect(first.run(async () => 'sent')).resolves.toBe('sent');
  });

  it('holds commands until the first connect, then runs them at once', async () => {
    const connection = new Connection('connecting');
    const first = new FirstConnect(asClient(connection), 1000);
    const order: string[] = [];
    const held = first.run(async () => order.push('held command'));
    expect(first.whenReady()).toBeDefined();
    order.push('ready');
    connection.becomeReady();
    await held;
    expect(order).toEqual(['ready', 'held command']);
    expect(first.whenReady()).toBeUndefined();
  });

  it('lets commands go (to fail on their own) when the first connect times out', async () => {
    const first = new FirstConnect(asClient(new Connection('connecting')), 20);
    await expect(first.run(async () => 'sent after the wait')).resolves.toBe('sent after the wait');
    expect(first.whenReady()).toBeUndefined();
  });
});
