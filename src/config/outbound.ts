import { parseAllowList } from '../net/outbound-policy.js';
import { list, setting } from './define.js';
import { toError } from '../errors.js';

const allowList = () =>
  list().superRefine((entries, ctx) => {
    try {
      parseAllowList(entries);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: toError(err).message });
    }
  });

/**
 * Outbound requests made for a user: feed fetches and their redirects, and whatever the crawler's
 * browser is led to beyond the operator's own CRAWL_BASE_URL (see src/net/outbound-policy.ts).
 */
export const outboundSettings = {
  allow: setting(
    'OUTBOUND_ALLOW',
    allowList(),
    '',
    'Comma-separated CIDR blocks, addresses and host names (10.0.0.0/8, ::1, feeds.intranet, *.corp.example) that feeds, their redirects and the crawler browser may reach although they are loopback, private, link-local, CGNAT or otherwise not public. Every user who can add a feed can then make the platform fetch from them; empty = public addresses only.',
  ),
};
