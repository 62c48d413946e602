// Where a webhook delivery may connect. Registration refused private, loopback and link-local targets already
// (store/webhook-targets.ts); a delivery checks again, on the URL's host (a literal address or a localhost name,
// read as DNS reads it: lib/private-hosts.ts) and on the address the name resolves to when it connects
// (request-filtering-agent), so a name that later resolves to a private address is refused too.
import type { Agent } from 'node:http';
import { sharedKeepAliveAgents } from '../lib/keep-alive-agents.js';
import { isPrivateHost } from '../lib/private-hosts.js';
import { PRIVATE_TARGET_REFUSED, WebhookTargetError } from '../store/webhook-targets.js';

/**
 * The agent a delivery connects with, its connections kept for the next delivery (lib/keep-alive-agents.ts): one
 * that refuses private addresses after DNS, unless they are allowed. Throws WebhookTargetError, before any DNS,
 * for a host the registration check refuses by name (an endpoint registered while the switch was on, or before
 * that check read names as DNS does).
 */
export function deliveryAgent(url: string, options: { allowPrivate: boolean }): Agent {
  const target = new URL(url);
  if (!options.allowPrivate && isPrivateHost(target.hostname))
    throw new WebhookTargetError(PRIVATE_TARGET_REFUSED);
  return sharedKeepAliveAgents(options.allowPrivate).agentFor(target);
}
