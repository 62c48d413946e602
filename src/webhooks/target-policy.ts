// Where webhooks may be sent. A target on a private, loopback or link-local address would let whoever registers
// an endpoint make slotfeed call into the network it runs in (SSRF), so such targets are refused unless the
// operator allows them (WEBHOOK_ALLOW_PRIVATE_TARGETS, for a receiver on the same host or in tests). The check
// runs twice: on the URL's host when an endpoint is registered and again when a delivery connects (a literal
// address or a localhost name, read as DNS reads it: see normalisedHost), and on the address the name resolves
// to when a delivery connects (request-filtering-agent), so a name that later resolves to a private address is
// refused too.
import type { Agent } from 'node:http';
import ipaddr from 'ipaddr.js';
import { useAgent } from 'request-filtering-agent';

export class WebhookTargetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookTargetError';
  }
}

/**
 * A URL's host as both checks read it: lower case, IPv6 brackets off, and the root's trailing dot off. DNS
 * reads "localhost." and "localhost" as one name, so a check that compared spellings would let the first pass.
 */
export function normalisedHost(hostname: string): string {
  return hostname
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.+$/, '');
}

/** A literal address outside the public unicast range (ipaddr.js classifies it), or a localhost name. */
function isPrivateHost(hostname: string): boolean {
  const bare = normalisedHost(hostname);
  if (bare === 'localhost' || bare.endsWith('.localhost')) return true;
  if (!ipaddr.isValid(bare)) return false;
  return ipaddr.process(bare).range() !== 'unicast';
}

const PRIVATE_REFUSED =
  'private, loopback and link-local addresses are refused (WEBHOOK_ALLOW_PRIVATE_TARGETS allows them)';

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
  if (!options.allowPrivate && isPrivateHost(url.hostname)) throw new WebhookTargetError(PRIVATE_REFUSED);
  if (url.href.length > 2000) throw new WebhookTargetError('a webhook URL has at most 2,000 characters');
  return url.href;
}

/**
 * The agent a delivery connects with: one that refuses private addresses after DNS, unless they are allowed.
 * Throws WebhookTargetError, before any DNS, for a host the registration check refuses by name (an endpoint
 * registered while the switch was on, or before that check read names as DNS does).
 */
export function deliveryAgent(url: string, options: { allowPrivate: boolean }): Agent | undefined {
  if (options.allowPrivate) return undefined;
  if (isPrivateHost(new URL(url).hostname)) throw new WebhookTargetError(PRIVATE_REFUSED);
  return useAgent(url);
}
