/** One `{match}` entry of `sources`, `destinations` or `selectors`. */
export interface Selector {
  match: Record<string, string>;
}

/**
 * The fields of a stored policy that matching reads; the engine hands back the caller's own
 * objects, so any richer resource type (the wire form) passes through unchanged.
 */
export interface PolicyResource {
  type: string;
  name: string;
  creationTime: string;
  sources?: readonly Selector[];
  destinations?: readonly Selector[];
  selectors?: readonly Selector[];
}
