// The one-button form every page uses for an action: a POST to `action`, asking first (data-confirm,
// public/slotfeed.js) when the action cannot be undone.
import { html, type Raw } from './html.js';

export interface PostButtonOptions {
  /** Asked before the form is sent; the form is sent only when the person confirms. */
  confirm?: string;
  /** Styled as destructive. */
  danger?: boolean;
  /** The button's id, for tests and links. */
  id?: string;
  /** More attributes of the button (data-action="…"). */
  attributes?: Raw;
}

export function postButton(action: string, label: string, options: PostButtonOptions = {}): Raw {
  return html`<form
    method="post"
    action="${action}"
    ${options.confirm ? html`data-confirm="${options.confirm}"` : ''}
  >
    <button
      type="submit"
      class="button small ${options.danger ? 'danger' : ''}"
      ${options.id ? html`id="${options.id}"` : ''}
      ${options.attributes ?? ''}
    >
      ${label}
    </button>
  </form>`;
}
