/**
 * The leader's config generation (the `shared-config-publish` maintenance task), one round:
 * compute from the DB → one script: if the published digest is the same, only renew its TTL,
 * otherwise publish a new version (INCR + SET) → let this process load it at once. The script
 * checks in Redis that this term still holds the leader's lease (LEADER_TASK).
 */
import type { Logger } from '../logging/logger.js';
import type { LeaderTerm } from './leadership.js';
import { encodeBody, type SharedConfigContent, type SharedConfigView } from './shared-config.js';
import type { SharedConfigStore } from './shared-config-store.js';

export interface PublishDeps {
  store: SharedConfigStore;
  compute: () => Promise<SharedConfigContent>;
  sharedConfig: SharedConfigView;
  instanceId: string;
  ttlMs: number;
  logger: Logger;
}

export type PublishOutcome = { kind: 'published'; version: number; digest: string } | { kind: 'unchanged'; digest: string } | { kind: 'not-leader' };

export async function publishSharedConfig(deps: PublishDeps, term: LeaderTerm): Promise<PublishOutcome> {
  const content = await deps.compute();
  if (!term.isCurrent()) return { kind: 'not-leader' };
  const { body, digest } = encodeBody({ generatedAt: new Date().toISOString(), generatedBy: deps.instanceId }, content);
  const result = await deps.store.publish(term.value, digest, body, deps.ttlMs);
  if (result.kind === 'not-leader') return result;
  if (result.kind === 'unchanged') return { kind: 'unchanged', digest };
  const { version } = result;
  deps.logger.info({ version, digest, poolGroups: content.poolGroups, term: term.token }, 'shared config published');
  await deps.sharedConfig.refresh();
  return { kind: 'published', version, digest };
}
