/** Version of this build (package.json). */
export const MESH_CP_VERSION = '0.1.0';

/** Compatibility table served by `GET /versions` (spec 9): data plane version → proxy version. */
export const COMPATIBILITY: { meshDp: Record<string, { proxy: string }> } = {
  meshDp: {
    '0.1.0': { proxy: '~1.34.0' },
  },
};
