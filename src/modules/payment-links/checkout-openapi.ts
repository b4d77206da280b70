/**
 * The public checkout's entries in the core host's OpenAPI document: no API key (`security: []`),
 * rate-limited per client address. Written by hand: these routes run no GraphQL operation.
 */
const errors = (...codes: number[]) => Object.fromEntries(codes.map((c) => [String(c), { $ref: `#/components/responses/E${c}` }]));
const json = (description: string) => ({ description, content: { 'application/json': { schema: { type: 'object', properties: { data: { type: 'object' } } } } } });
const slug = { name: 'slug', in: 'path', required: true, schema: { type: 'string' } };
const id = { name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } };
const tags = ['Public checkout'];

export const CHECKOUT_OPENAPI_PATHS: Record<string, Record<string, unknown>> = {
  '/pay/{slug}': {
    get: {
      operationId: 'checkoutPage',
      summary: "The hosted checkout page of a payment link (HTML; its script and style under /pay/assets/). With ?session= it resumes that session; a session that is not this link's is 404 (the page then offers this link's own checkout)",
      tags,
      security: [],
      parameters: [slug, { name: 'session', in: 'query', required: false, description: "A session id of this link's; any other value (another link's session, an unknown or malformed id) is 404 with the page, which then offers this link's own checkout", schema: { type: 'string' } }],
      responses: { '200': { description: 'The page', content: { 'text/html': {} } }, '404': { description: 'The page, for a session of another link', content: { 'text/html': {} } }, ...errors(429) },
    },
  },
  '/v1/checkout/links/{slug}': {
    get: {
      operationId: 'checkoutLink',
      summary: "A link's terms as a payer sees them: name, description, imgUrl, amount (null: open), currency, expiresAt, available and unavailableReason, options (each blockchain with its assets); nothing of the merchant",
      tags,
      security: [],
      parameters: [slug],
      responses: { '200': json('The link'), ...errors(404, 429) },
    },
  },
  '/v1/checkout/links/{slug}/sessions': {
    post: {
      operationId: 'startCheckout',
      summary:
        "Start a checkout session: a fresh deposit address, the exact amount, an expiry. A session reserves none of a limited link's payments: one is held only once a payment to the session is recorded, so open sessions never keep a payer out; a payment recorded when none is left is OVER_LIMIT (recorded, swept, not counted, refundable). PAYMENT_FAILED when the link is inactive or its paymentLimit is consumed or held by recorded payments, PAYMENT_EXPIRED when it expired. 429 RATE_LIMIT_EXCEEDED when the client's budget, its share of the link's sessions a minute or the link's sessions a minute are used up; only a session that opens spends the link's",
      tags,
      security: [],
      parameters: [slug],
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: { type: 'object', required: ['blockchainId', 'assetId'], properties: { blockchainId: { type: 'string', format: 'uuid' }, assetId: { type: 'string', format: 'uuid' }, amount: { type: 'string', description: 'Only for a link with an open amount' } } },
          },
        },
      },
      responses: { '201': json('The session: id, status, depositAddress, amount, asset, blockchain, expiresAt, paymentUri (EIP-681; a Solana Pay request on Solana, its label and message shortened to fit a QR code), qrCodeUrl'), ...errors(400, 404, 422, 429) },
    },
  },
  '/v1/checkout/links/{slug}/sessions/{id}': {
    get: {
      operationId: 'checkoutSession',
      summary:
        "A session's live state (what the page polls): status, amountReceived, amountConfirming, amountDue, amountOverpaid, transfersNotCounted, confirmations, transfers (each in its own asset and chain, with its kind: only PAYMENT counts); redirectUrl and message once it ends. Read only under the slug of the link it was opened on: another link's session is 404",
      tags,
      security: [],
      parameters: [slug, id],
      responses: { '200': json('The session'), ...errors(404, 429) },
    },
  },
  '/v1/checkout/links/{slug}/sessions/{id}/qr.svg': {
    get: { operationId: 'checkoutQrCode', summary: "The session's payment request (its paymentUri, the very same text: EIP-681, or Solana Pay on Solana) as an SVG QR code; another link's session is 404", tags, security: [], parameters: [slug, id], responses: { '200': { description: 'SVG', content: { 'image/svg+xml': {} } }, ...errors(404, 429) } },
  },
};
