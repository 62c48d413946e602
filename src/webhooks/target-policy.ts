// Where webhooks may be sent. A target on a private, loopback or link-local address would let whoever registers
// an endpoint make slotfeed call into the network it runs in (SSRF), so such targets are refused unless the
// operator allows them (WEBHOOK_ALLOW_PRIVATE_TARGETS, for a receiver on the same host or in tests). The check
// runs twice: on the URL when an endpoint is registered (a literal address or localhost), and on the address
// the name resolves to when a delivery connects (request-filtering-agent), so a name that later resolves to a
// private address is refused too.
import type { Agent } from 'node:http';
import ipaddr from 'ipaddr.js';
import { useAgent } from 'request-filtering-agent';

export class WebhookTargetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookTargetError';
  }
}

/** A literal address outside the public unicast range (ipaddr.js classifies it), or a localhost name. */
function isPrivateLiteral(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (bare === 'localhost' || bare.endsWith('.localhost')) return true;
  if (!ipaddr.isValid(bare)) return false;
  return ipaddr.process(bare).range() !== 'unicast';
}

/** The URL, normalised; throws WebhookTargetError saying what is wrong with it. */
export function validWebhookUrl(raw: string, options: { allowPrivate: boolean }): string {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new WebhookTargetError('not a URL: give the full address, e.g. https://example.com/hooks/slotfeed');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new WebhookTargetError('a webhook URL is http or https');
  }
  if (url.username || url.password) {
    throw new WebhookTargetError(
      'a webhook URL carries no user name or password: the signature authenticates',
    );
  }
  if (!options.allowPrivate && isPrivateLiteral(url.hostname)) {
    throw new WebhookTargetError(
      'private, loopback and link-local addresses are refused (WEBHOOK_ALLOW_PRIVATE_TARGETS allows them)',
    );
  }
  if (url.href.length > 2000) throw new WebhookTargetError('a webhook URL has at most 2,000 characters');
  return url.href;
}

/** The agent a delivery connects with: one that refuses private addresses after DNS, unless they are allowed. */
export function deliveryAgent(url: string, options: { allowPrivate: boolean }): Agent | undefined {
  return options.allowPrivate ? undefined : useAgent(url);
}
