// How slotfeed proves an event in a person's calendar is one it wrote: each event carries, beside the marker that
// names its feed, a keyed proof of (feed, UID) (X-SLOTFEED-PROOF). A person's copy of the event keeps the marker
// and the proof (calendar apps keep X- properties) but gets a UID of its own, which the proof does not fit; an
// event slotfeed wrote but never heard was written (an answer lost) fits. slotfeed deletes an event only when the
// proof fits, or when it recorded writing that UID there.
import type { TokenVault } from '../store/token-vault.js';

export interface EventProofs {
  /** The proof written into the event of `uid` in `feedId`'s events. */
  sign(feedId: string, uid: string): string;
  /** Whether `proof` is the one slotfeed wrote for exactly this feed and UID. */
  fits(feedId: string, uid: string, proof: string | undefined): boolean;
}

const PURPOSE = 'caldav-event';
const provenText = (feedId: string, uid: string) => `${feedId}\n${uid}`;

export function eventProofs(vault: Pick<TokenVault, 'prove' | 'proves'>): EventProofs {
  return {
    sign: (feedId, uid) => vault.prove(PURPOSE, provenText(feedId, uid)),
    fits: (feedId, uid, proof) =>
      proof !== undefined && vault.proves(PURPOSE, provenText(feedId, uid), proof),
  };
}
