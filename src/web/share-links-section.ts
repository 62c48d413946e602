// A feed's share links as the owner's page and the admin's pages list them (issue 37): each link's label, when it
// expires and was last opened, its address (with a copy button and a QR code for a phone) and "Revoke"; and the
// form that makes another. Shared by both audiences, like the CalDAV section: the paths say whose routes answer.
import QRCode from 'qrcode';
import {
  InvalidShareLinkError,
  shareLinkExpiry,
  type ShareLinkRecord,
  type ShareLinkStore,
} from '../store/share-links.js';
import { field } from './form-replies.js';
import { HttpError } from './http-error.js';
import { html, Raw } from './html.js';
import { postButton } from './post-button.js';
import { shownTime } from './time-html.js';

export interface ShareLinkView {
  link: ShareLinkRecord;
  /** The page's address; null when its secret was not kept sealed (made by a command without the vault). */
  url: string | null;
  qrSvg: string | null;
}

export interface ShareLinkPaths {
  create(feedId: string): string;
  revoke(linkId: string): string;
}

export const shareUrlOf = (publicBaseUrl: string, secret: string): string =>
  `${publicBaseUrl.replace(/\/+$/, '')}/share/${encodeURIComponent(secret)}`;

/** The active links of these feeds, with their addresses opened and drawn as QR codes, by feed id. */
export async function shareLinkViews(
  store: Pick<ShareLinkStore, 'list' | 'revealSecret'>,
  publicBaseUrl: string,
  feedIds: readonly string[],
): Promise<Map<string, ShareLinkView[]>> {
  const byFeed = new Map<string, ShareLinkView[]>(feedIds.map((id) => [id, []]));
  if (feedIds.length === 0) return byFeed;
  for (const link of await store.list({ feedIds })) {
    const secret = link.secretRecoverable ? await store.revealSecret(link.id) : null;
    const url = secret === null ? null : shareUrlOf(publicBaseUrl, secret);
    const qrSvg =
      url === null ? null : await QRCode.toString(url, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' });
    byFeed.get(link.feedId)?.push({ link, url, qrSvg });
  }
  return byFeed;
}

/**
 * A share link made from the form both the owner's and the admin's pages send (label, expiry, origins), its
 * expiry read in `zone`; a refusal of what was typed (a bad date, an origin that is none) is a 400.
 */
export async function shareLinkFromForm(
  links: Pick<ShareLinkStore, 'create'>,
  feedId: string,
  zone: string,
  form: unknown,
  now: Date,
): Promise<ShareLinkRecord> {
  const body = (form ?? {}) as Record<string, unknown>;
  try {
    const { link } = await links.create({
      feedId,
      label: field(body, 'label'),
      expiresAt: shareLinkExpiry(expirySpecOf(body), zone, now),
      frameAncestors: originsOf(body.origins),
      now,
    });
    return link;
  } catch (thrown: unknown) {
    if (thrown instanceof InvalidShareLinkError) throw new HttpError(400, thrown.message);
    throw thrown;
  }
}

/** Form fields → the expiry as shareLinkExpiry takes it. */
function expirySpecOf(body: Record<string, unknown>): string {
  const value = (name: string) => (typeof body[name] === 'string' ? (body[name] as string) : '');
  switch (value('expires')) {
    case 'days':
      return value('days');
    case 'date':
      return value('date');
    default:
      return 'never';
  }
}

/** One origin a line (or separated by spaces or commas). */
const originsOf = (text: unknown): string[] =>
  typeof text === 'string' ? text.split(/[\s,]+/).filter((s) => s !== '') : [];

function linkItem(
  view: ShareLinkView,
  input: { zone: string | null; now: Date; paths: ShareLinkPaths },
): Raw {
  const { link } = view;
  const urlId = `share-url-${link.id}`;
  return html`<li class="share-link" data-share-link-id="${link.id}">
    <p class="share-link-label"><strong>${link.label}</strong></p>
    <p class="muted small">
      ${
        link.expiresAt === null
          ? 'Never expires'
          : html`${link.expiresAt.getTime() <= input.now.getTime() ? 'Expired' : 'Expires'}
            ${shownTime(link.expiresAt, input.zone, input.now)}`
      };
      ${
        link.lastOpenedAt === null
          ? 'not opened yet'
          : html`last opened ${shownTime(link.lastOpenedAt, input.zone, input.now, { lead: 'relative' })}`
      }${link.frameAncestors.length > 0 ? html`; may be embedded from ${link.frameAncestors.join(', ')}` : ''}
    </p>
    ${
      view.url === null
        ? html`<p class="muted small">
            Its address was not kept for showing again: revoke it and make another.
          </p>`
        : html`<div class="copy-field">
              <label for="${urlId}" class="visually-hidden">Address of ${link.label}</label>
              <input id="${urlId}" type="text" readonly value="${view.url}" />
              <button type="button" data-copy="${urlId}">Copy</button>
            </div>
            ${
              view.qrSvg === null
                ? ''
                : html`<details>
                    <summary>QR code</summary>
                    <div class="qr" role="img" aria-label="QR code of the share link ${link.label}">
                      ${new Raw(view.qrSvg)}
                    </div>
                  </details>`
            }`
    }
    <div class="actions">
      ${view.url === null ? '' : html`<a class="button small" href="${view.url}">Open</a>`}
      ${postButton(input.paths.revoke(link.id), 'Revoke', {
        confirm: `Revoke the share link “${link.label}”? Its page stops working at once.`,
        danger: true,
        id: `revoke-share-${link.id}`,
      })}
    </div>
  </li>`;
}

export function shareLinksSection(input: {
  feedId: string;
  links: readonly ShareLinkView[];
  zone: string | null;
  now: Date;
  paths: ShareLinkPaths;
}): Raw {
  const id = (name: string) => `share-${name}-${input.feedId}`;
  return html`<details
    class="share-links"
    id="share-links-${input.feedId}"
    ${input.links.length > 0 ? 'open' : ''}
  >
    <summary>
      Share with anyone (${input.links.length} ${input.links.length === 1 ? 'link' : 'links'})
    </summary>
    <p class="muted small">
      A share link opens a page of this feed’s free time in the viewer’s time zone, each block linked to where
      it can be booked. It never shows the feed’s address, and you can revoke it at any time.
    </p>
    ${
      input.links.length > 0
        ? html`<ul class="share-link-list">
            ${input.links.map((view) => linkItem(view, input))}
          </ul>`
        : ''
    }
    <form method="post" action="${input.paths.create(input.feedId)}" class="share-link-form">
      <div class="form-grid">
        <div class="field">
          <label for="${id('label')}">Label (for you)</label>
          <input
            id="${id('label')}"
            name="label"
            maxlength="100"
            required
            placeholder="For the Acme interview"
          />
        </div>
        <div class="field">
          <label for="${id('expires')}">Expires</label>
          <select id="${id('expires')}" name="expires">
            <option value="never">Never</option>
            <option value="days">After a number of days</option>
            <option value="date">At the end of a date</option>
          </select>
        </div>
        <div class="field expires-days">
          <label for="${id('days')}">Days</label>
          <input
            id="${id('days')}"
            name="days"
            type="number"
            min="1"
            max="3660"
            inputmode="numeric"
            value="7"
          />
        </div>
        <div class="field expires-date">
          <label for="${id('date')}">Date</label>
          <input id="${id('date')}" name="date" type="date" />
        </div>
        <div class="field">
          <label for="${id('origins')}">May be embedded from</label>
          <textarea
            id="${id('origins')}"
            name="origins"
            rows="2"
            placeholder="https://example.com"
          ></textarea>
          <span class="hint">Origins whose pages may show it in an iframe, one a line. Empty: none.</span>
        </div>
      </div>
      <button type="submit" class="button primary">Make a share link</button>
    </form>
  </details>`;
}
