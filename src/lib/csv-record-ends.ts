// CSV as Postgres's COPY writes it (records ended by LF) made RFC 4180's (records ended by CRLF), as the
// reports' own CSV writes them (reports/report-format.ts). A line feed inside a quoted field is the field's own
// text and stays as it is; only the line feeds that end records become CRLF. The text arrives in chunks cut
// anywhere, a quoted field's quotes in different chunks, so whether the next byte is inside quotes is kept
// from one chunk to the next. Quotes inside a field are doubled (""), which leaves that reading unchanged.

const QUOTE = 0x22;
const LF = 0x0a;
const CR = 0x0d;

/** A function that turns each next chunk of LF-ended CSV into CRLF-ended CSV, chunks in order. */
export function createCrlfRecordEnds(): (chunk: Buffer) => Buffer {
  let inQuotes = false;
  return (chunk) => {
    // The record ends in this chunk: the line feeds met outside quotes.
    const ends: number[] = [];
    let at = 0;
    while (at < chunk.length) {
      if (inQuotes) {
        const quote = chunk.indexOf(QUOTE, at);
        if (quote === -1) break;
        inQuotes = false;
        at = quote + 1;
        continue;
      }
      const quote = chunk.indexOf(QUOTE, at);
      const stop = quote === -1 ? chunk.length : quote;
      for (let lf = chunk.indexOf(LF, at); lf !== -1 && lf < stop; lf = chunk.indexOf(LF, lf + 1)) {
        ends.push(lf);
      }
      if (quote === -1) break;
      inQuotes = true;
      at = quote + 1;
    }
    if (ends.length === 0) return chunk;
    const out = Buffer.allocUnsafe(chunk.length + ends.length);
    let from = 0;
    let written = 0;
    for (const end of ends) {
      written += chunk.copy(out, written, from, end);
      out[written++] = CR;
      out[written++] = LF;
      from = end + 1;
    }
    chunk.copy(out, written, from);
    return out;
  };
}
