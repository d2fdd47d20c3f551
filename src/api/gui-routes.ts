import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { AppError } from '../util/errors.js';

/** Where the GUI is served from, and whether at all (config `apiServer.gui.enabled`). */
export interface GuiSettings {
  enabled: boolean;
  /** The built assets (`dist/gui`); absent: found beside the running code. */
  root?: string;
}

/** The route config of the GUI's files: anyone may fetch them, as they hold no data (auth-hooks.ts). */
export const PUBLIC_ROUTE = { public: true } as const;

/** The path under which the GUI is served. */
export const GUI_PATH = '/gui';

// The page loads its own script and style only, calls this origin only, and may not be framed:
// no inline script can run, and no other site can show the (possibly admin) page under its own.
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * The folder of the built GUI: `dist/gui` of the checkout or package this code runs from, from
 * `dist/bin/*.js` (the bundle) as from `src/api/` (tests).
 */
export function findGuiRoot(): string | undefined {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i += 1) {
    const candidate = join(dir, 'dist', 'gui');
    if (existsSync(join(candidate, 'index.html'))) return candidate;
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return undefined;
}

/** Headers every GUI answer carries: the page's content policy and no sniffing or framing. */
function guard(reply: FastifyReply): void {
  reply
    .header('content-security-policy', CSP)
    .header('x-content-type-options', 'nosniff')
    .header('x-frame-options', 'DENY')
    .header('referrer-policy', 'no-referrer')
    .header('cross-origin-resource-policy', 'same-origin');
}

/**
 * `GET /gui` and `GET /gui/*`: the web GUI. Files under `/gui/assets/` have hashed names and are
 * cached for a year; every other path is a view of the single-page app (a deep link) and gets
 * `index.html`, never cached, so a new build is picked up on the next load. The GUI calls the
 * API of the same origin as any client does, and is refused what its caller may not do.
 */
export async function registerGuiRoutes(app: FastifyInstance, settings: GuiSettings): Promise<void> {
  if (!settings.enabled) return;
  const root = settings.root ?? findGuiRoot();
  const notBuilt = (): AppError =>
    new AppError(
      'UNAVAILABLE',
      'GUI not built',
      'the GUI files (dist/gui) are missing: run `npm run build`, or set apiServer.gui.enabled to false',
    );
  if (root !== undefined) {
    await app.register(fastifyStatic, {
      root,
      serve: false,
      index: false,
      decorateReply: true,
      preCompressed: true,
    });
  }
  const page = (reply: FastifyReply) => {
    if (root === undefined) throw notBuilt();
    guard(reply);
    reply.header('cache-control', 'no-cache');
    return reply.sendFile('index.html', { cacheControl: false });
  };
  const opts = { config: PUBLIC_ROUTE };
  app.get(GUI_PATH, opts, async (_req, reply) => page(reply));
  app.get(`${GUI_PATH}/*`, opts, async (req, reply) => {
    const rest = (req.params as { '*': string })['*'];
    if (!rest.startsWith('assets/')) return page(reply);
    if (root === undefined) throw notBuilt();
    guard(reply);
    return reply.sendFile(rest, { maxAge: '365d', immutable: true, dotfiles: 'deny' });
  });
}
