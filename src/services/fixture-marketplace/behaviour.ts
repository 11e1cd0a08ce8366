/**
 * How the fixture marketplace answers search requests: normally, or blocked (403, 429, a
 * CAPTCHA page), slow, or broken. Rules are checked in order; the first that matches a
 * request decides; a rule with `times` lapses after that many matching requests. With no
 * matching rule the page is served normally.
 *
 * `match.clientIp` is the first X-Forwarded-For address (what a proxy in front says its egress
 * address is) or the socket's address: a site blocks an address, so blocking one proxy's
 * traffic while another gets through is a rule with that proxy's address.
 */
import { z } from 'zod';

export const fixtureModes = ['normal', 'forbidden', 'rate-limited', 'captcha', 'slow', 'broken', 'server-error'] as const;
export type FixtureMode = (typeof fixtureModes)[number];

export const behaviourRule = z.object({
  mode: z.enum(fixtureModes),
  /** slow: how long to wait before answering (default 5000 ms). */
  delayMs: z.number().int().min(0).max(600_000).optional(),
  match: z
    .object({
      keyword: z.string().optional(),
      status: z.enum(['on_sale', 'sold']).optional(),
      page: z.number().int().min(1).optional(),
      clientIp: z.string().optional(),
    })
    .optional(),
  times: z.number().int().min(1).optional(),
});
export type BehaviourRule = z.infer<typeof behaviourRule>;

export interface SearchRequestInfo {
  keyword: string;
  status: 'on_sale' | 'sold';
  page: number;
  clientIp: string;
}

export class BehaviourRules {
  private rules: BehaviourRule[] = [];

  /** Replaces every rule. */
  set(rules: BehaviourRule[]): void {
    this.rules = rules.map((r) => ({ ...r }));
  }

  add(rule: BehaviourRule): void {
    this.rules.push({ ...rule });
  }

  list(): BehaviourRule[] {
    return this.rules.map((r) => ({ ...r }));
  }

  /** The rule deciding this request (its use is counted), or null for a normal answer. */
  pick(req: SearchRequestInfo): BehaviourRule | null {
    const rule = this.rules.find((r) => matches(r, req));
    if (!rule) return null;
    if (rule.times !== undefined) {
      rule.times -= 1;
      if (rule.times <= 0) this.rules = this.rules.filter((r) => r !== rule);
    }
    return rule;
  }
}

function matches(rule: BehaviourRule, req: SearchRequestInfo): boolean {
  const m = rule.match ?? {};
  return (
    (m.keyword === undefined || m.keyword === req.keyword) &&
    (m.status === undefined || m.status === req.status) &&
    (m.page === undefined || m.page === req.page) &&
    (m.clientIp === undefined || m.clientIp === req.clientIp)
  );
}
