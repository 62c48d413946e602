// Which URLs the CalDAV client may connect to: the webhook targets' policy (store/webhook-targets.ts,
// webhooks/target-policy.ts). A CalDAV URL is chosen by whoever connects a calendar, so a private, loopback or
// link-local host would let them make slotfeed call into the network it runs in (SSRF): refused by name here
// (lib/private-hosts.ts) for every request and redirect, and after DNS by the transport (http-transport.ts), unless
// the operator allows private targets (tests, the demo, a server on the same network). And as every request carries
// the password, plain http is for those allowed private targets only.
import { getDomain } from 'tldts';
import { isPrivateHost } from '../lib/private-hosts.js';
import { CalDavTargetError } from './errors.js';

/** Why a private target is refused, before a request and after DNS alike. */
export const PRIVATE_CALDAV_TARGET_REFUSED =
  'private, loopback and link-local addresses are refused (allowPrivateTargets allows them)';

export interface TargetPolicy {
  allowPrivateTargets: boolean;
}

/** The URL, parsed, when the client may send a request there; throws CalDavTargetError saying why not. */
export function checkedCalDavUrl(raw: string, policy: TargetPolicy): URL {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    // The text itself is not repeated: it may be a password pasted into the wrong field.
    throw new CalDavTargetError('not a URL: give the full address, e.g. https://caldav.example.com/');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new CalDavTargetError(`a CalDAV URL is https (not ${url.protocol.replace(/:$/, '')})`);
  }
  if (url.username || url.password) {
    throw new CalDavTargetError(
      'a CalDAV URL carries no user name or password: give them as the user name and password',
    );
  }
  if (!policy.allowPrivateTargets) {
    if (isPrivateHost(url.hostname)) {
      throw new CalDavTargetError(`${url.host}: ${PRIVATE_CALDAV_TARGET_REFUSED}`);
    }
    if (url.protocol === 'http:') {
      throw new CalDavTargetError(
        `${url.host}: a CalDAV URL is https; over http the password would travel in clear`,
      );
    }
  }
  return url;
}

/**
 * Where the password may go, given the server's address the person typed: that origin, the same host over https,
 * and other https hosts of the same registrable domain (iCloud's caldav.icloud.com sends its users on to
 * pNN-caldav.icloud.com), decided by the Public Suffix List (tldts), so that example.co.uk never vouches for
 * another.co.uk. Never another site, and never another host when the one typed is an IP literal or a name with no
 * registrable domain (localhost). Every request and redirect is held to it (guarded-fetch.ts), discovery included.
 */
export function credentialScope(serverUrl: URL): (url: URL) => boolean {
  const site = getDomain(serverUrl.hostname, { allowPrivateDomains: true });
  return (url) => {
    if (url.origin === serverUrl.origin) return true;
    if (url.protocol !== 'https:') return false;
    if (url.hostname === serverUrl.hostname) return true;
    if (site === null || serverUrl.protocol !== 'https:') return false;
    return getDomain(url.hostname, { allowPrivateDomains: true }) === site;
  };
}
