import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { rateLimitHeaders } from '../../platform/rate-limit';
import type { CheckoutBudgets } from './checkout-budgets';
import type { PublicCheckoutService } from './public-checkout.service';

/** The hosted page's files, shipped next to this module (`npm run build` copies them to dist). */
const PAGE_DIR = join(__dirname, 'checkout-page');
const ASSETS: Record<string, string> = { 'checkout.css': 'text/css; charset=utf-8', 'checkout.js': 'text/javascript; charset=utf-8', 'favicon.svg': 'image/svg+xml' };

/**
 * Strict: the page runs only its own script and style, talks only to this host, loads images from
 * this host (the QR code) or over HTTPS (the merchant's image), and cannot be framed.
 */
const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' https:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

function secure(reply: FastifyReply): FastifyReply {
  return reply
    .header('Content-Security-Policy', PAGE_CSP)
    .header('X-Content-Type-Options', 'nosniff')
    .header('Referrer-Policy', 'no-referrer')
    .header('X-Frame-Options', 'DENY')
    .header('Cache-Control', 'no-store');
}

/**
 * The public checkout (no API key; the host spends CheckoutBudgets before each request, as each
 * route's `checkoutBudget` says, and a session spends its link's as it opens): the hosted page at
 * /pay/{slug}, and the JSON API its script calls.
 */
export function registerCheckoutRoutes(app: FastifyInstance, checkout: PublicCheckoutService, budgets: CheckoutBudgets): void {
  const page = readFileSync(join(PAGE_DIR, 'index.html'), 'utf8');
  const assets = new Map(Object.keys(ASSETS).map((name) => [name, readFileSync(join(PAGE_DIR, name), 'utf8')]));

  // A session named in the URL must be one of this link's: another link's is 404 (the page then says so).
  app.get<{ Params: { slug: string }; Querystring: { session?: string } }>('/pay/:slug', async (request, reply) => {
    const { session } = request.query;
    const foreign = session !== undefined && !(await checkout.isSessionOf(request.params.slug, String(session)));
    return secure(reply).code(foreign ? 404 : 200).type('text/html; charset=utf-8').send(page);
  });
  app.get<{ Params: { name: string } }>('/pay/assets/:name', async (request, reply) => {
    const body = assets.get(request.params.name);
    if (body === undefined) return secure(reply).code(404).type('text/plain').send('Not found');
    return secure(reply).type(ASSETS[request.params.name]).send(body);
  });

  app.get<{ Params: { slug: string } }>('/v1/checkout/links/:slug', async (request, reply) => secure(reply).send({ data: await checkout.link(request.params.slug) }));
  app.post<{ Params: { slug: string }; Body: Record<string, unknown> | undefined }>('/v1/checkout/links/:slug/sessions', { config: { checkoutBudget: 'opening' } }, async (request, reply) => {
    // The link's budget is spent only by a session that opens: a refused body spends none of it.
    const admit = async () => {
      reply.headers(rateLimitHeaders(await budgets.admitSession(request)));
    };
    return secure(reply)
      .code(201)
      .send({ data: await checkout.start(request.params.slug, request.body ?? {}, admit) });
  });
  app.get<{ Params: { slug: string; id: string } }>('/v1/checkout/links/:slug/sessions/:id', { config: { checkoutBudget: 'reading' } }, async (request, reply) => secure(reply).send({ data: await checkout.session(request.params.slug, request.params.id) }));
  app.get<{ Params: { slug: string; id: string } }>('/v1/checkout/links/:slug/sessions/:id/qr.svg', { config: { checkoutBudget: 'reading' } }, async (request, reply) =>
    secure(reply)
      .type('image/svg+xml')
      .send(await checkout.qrCode(request.params.slug, request.params.id)),
  );
}
