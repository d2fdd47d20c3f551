/** Past this many characters the page's text so far goes into a buffer (V8 strings stop at ~512 M). */
const FLUSH_CHARS = 64 * 1024 * 1024;

/**
 * `{"total":N,"items":[...],"next":...}` serialised item by item: a page of 1,000 items of 1 MB
 * would pass V8's longest string as one `JSON.stringify` and fail ("Invalid string length").
 * A page that fits is one string, as before; a larger one is a buffer.
 */
export function pageBody(
  total: number,
  items: readonly unknown[],
  next: string | null,
  flushChars = FLUSH_CHARS,
): string | Buffer {
  const parts: Buffer[] = [];
  let text = `{"total":${total},"items":[`;
  for (let i = 0; i < items.length; i++) {
    const json = JSON.stringify(items[i]);
    if (text.length + json.length > flushChars) {
      parts.push(Buffer.from(text));
      text = '';
    }
    text += i > 0 ? `,${json}` : json;
  }
  text += `],"next":${JSON.stringify(next)}}`;
  if (parts.length === 0) return text;
  parts.push(Buffer.from(text));
  return Buffer.concat(parts);
}
