// Which hosts are inside the network slotfeed runs in: a literal address outside the public unicast range, or a
// localhost name. An outbound request to one would let whoever chose the URL make slotfeed call into that network
// (SSRF). Read as DNS reads a host, so no spelling of a refused name slips through.
import ipaddr from 'ipaddr.js';

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
export function isPrivateHost(hostname: string): boolean {
  const bare = normalisedHost(hostname);
  if (bare === 'localhost' || bare.endsWith('.localhost')) return true;
  if (!ipaddr.isValid(bare)) return false;
  return ipaddr.process(bare).range() !== 'unicast';
}
