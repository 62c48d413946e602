// Whether a request accepts a gzip-coded response (RFC 9110 §12.5.3). Feeds are compressed only when the
// client asks: some calendar clients send no Accept-Encoding and cannot inflate.

interface Coding {
  name: string;
  q: number;
}

function parseCodings(header: string): Coding[] {
  return header
    .split(',')
    .map((part) => {
      const [name = '', ...params] = part.split(';').map((p) => p.trim());
      const qParam = params.find((p) => /^q=/i.test(p));
      const q = qParam === undefined ? 1 : Number(qParam.slice(2));
      return { name: name.toLowerCase(), q: Number.isFinite(q) ? q : 0 };
    })
    .filter((coding) => coding.name !== '');
}

export function acceptsGzip(header: string | undefined): boolean {
  if (header === undefined) return false;
  const codings = parseCodings(header);
  const explicit = codings.find((c) => c.name === 'gzip' || c.name === 'x-gzip');
  if (explicit) return explicit.q > 0;
  const wildcard = codings.find((c) => c.name === '*');
  return wildcard !== undefined && wildcard.q > 0;
}
