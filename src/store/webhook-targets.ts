// Which URLs a webhook endpoint may have. A target on a private, loopback or link-local address would let whoever
// registers an endpoint make slotfeed call into the network it runs in (SSRF), so such targets are refused unless
// the operator allows them (WEBHOOK_ALLOW_PRIVATE_TARGETS, for a receiver on the same host or in tests). The store
// checks a URL when an endpoint is registered (webhooks.ts); the delivery checks it again when it connects, after
// DNS too (webhooks/target-policy.ts), so a name that later resolves to a private address is refused as well.
import { isPrivateHost } from '../lib/private-hosts.js';

export class WebhookTargetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookTargetError';
  }
}

/** Why a private target is refused, at registration and at delivery alike. */
export const PRIVATE_TARGET_REFUSED =
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
  if (!options.allowPrivate && isPrivateHost(url.hostname))
    throw new WebhookTargetError(PRIVATE_TARGET_REFUSED);
  if (url.href.length > 2000) throw new WebhookTargetError('a webhook URL has at most 2,000 characters');
  return url.href;
}
