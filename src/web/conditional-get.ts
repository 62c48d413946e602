// Conditional GET for feeds (RFC 9110 §13): If-None-Match against the ETag, else If-Modified-Since against
// Last-Modified in whole seconds. Pure functions over header values, so every case is testable without HTTP.
import { parseHttpDate, wholeSeconds } from '../lib/http-date.js';

export interface Validators {
  /** Opaque tags (without W/ or quotes) that identify the current representation; any match means unchanged. */
  opaqueTags: readonly string[];
  lastModified: Date;
}

export interface ConditionalHeaders {
  ifNoneMatch?: string | undefined;
  ifModifiedSince?: string | undefined;
}

const ENTITY_TAG = /^\s*(?:W\/)?"([\x21\x23-\x7e\x80-\xff]*)"\s*(?:,|$)/;

/**
 * The opaque tags of an If-None-Match list, '*' as ['*'], or undefined when the value is malformed (then the
 * condition is treated as absent rather than guessed at).
 */
export function parseEntityTagList(value: string): string[] | undefined {
  if (value.trim() === '*') return ['*'];
  const tags: string[] = [];
  let rest = value;
  while (rest.trim() !== '') {
    // Empty list elements (", ,") are allowed by the list syntax (RFC 9110 §5.6.1).
    const empty = /^\s*,/.exec(rest);
    if (empty) {
      rest = rest.slice(empty[0].length);
      continue;
    }
    const match = ENTITY_TAG.exec(rest);
    if (!match) return undefined;
    tags.push(match[1] ?? '');
    rest = rest.slice(match[0].length);
  }
  return tags;
}

/**
 * True when a GET/HEAD may be answered 304. If-None-Match, when present and well-formed, decides alone
 * (RFC 9110 §13.1.3: If-Modified-Since is then ignored); its comparison is the weak one (§8.8.3.2), so
 * W/"x" matches "x". If-Modified-Since is compared in whole seconds; a malformed date is ignored.
 */
export function isNotModified(headers: ConditionalHeaders, validators: Validators): boolean {
  if (headers.ifNoneMatch !== undefined) {
    const tags = parseEntityTagList(headers.ifNoneMatch);
    if (tags !== undefined) {
      if (tags.includes('*')) return true;
      return tags.some((tag) => validators.opaqueTags.includes(tag));
    }
  }
  if (headers.ifModifiedSince !== undefined && headers.ifNoneMatch === undefined) {
    const since = parseHttpDate(headers.ifModifiedSince);
    if (since !== undefined) return wholeSeconds(validators.lastModified) <= wholeSeconds(since);
  }
  return false;
}
