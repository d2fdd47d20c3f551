/**
 * What one caller may make the server read and hold, before and after it is authenticated. A
 * proxyless client's DiscoveryRequest is a node (first request) and the names it subscribes to:
 * a few KB. Over these the stream ends with a status that names the limit.
 */
export const ADS_LIMITS = {
  /** The largest DiscoveryRequest read (grpc-js answers RESOURCE_EXHAUSTED over it, unread). */
  requestBytes: 1024 * 1024,
  /** Resource names in one request: more ends the stream with RESOURCE_EXHAUSTED. */
  resourceNames: 1000,
  /** Requests kept while the first one's node is checked. */
  earlyRequests: 32,
  /** Characters of a type URL, and type URLs one stream subscribes to (a proxyless client uses 3). */
  typeUrlLength: 256,
  typesPerStream: 16,
  /** Characters of a NACK's message kept for `/xds` (its `error_state`). */
  nackMessage: 4096,
  /** Characters of a status message (gRPC trailers are a few KB; a longer message is cut). */
  statusDetails: 1024,
} as const;

/** `details` cut to {@link ADS_LIMITS.statusDetails} characters (at a code point), marked when cut. */
export function clipDetails(details: string, max: number = ADS_LIMITS.statusDetails): string {
  if (details.length <= max) return details;
  let end = max - 1;
  // Not between the two halves of a surrogate pair.
  const last = details.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${details.slice(0, end)}…`;
}
