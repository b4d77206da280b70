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
    get: { operationId: 'checkoutPage', summary: 'The hosted checkout page of a payment link (HTML; its script and style under /pay/assets/)', tags, security: [], parameters: [slug], responses: { '200': { description: 'The page', content: { 'text/html': {} } }, ...errors(429) } },
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
      summary: 'Start a checkout session: a fresh deposit address, the exact amount, an expiry. PAYMENT_FAILED when the link is inactive or its paymentLimit is taken, PAYMENT_EXPIRED when it expired',
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
      responses: { '201': json('The session: id, status, depositAddress, amount, asset, blockchain, expiresAt, paymentUri (EIP-681), qrCodeUrl'), ...errors(400, 404, 422, 429) },
    },
  },
  '/v1/checkout/sessions/{id}': {
    get: {
      operationId: 'checkoutSession',
      summary: "A session's live state (what the page polls): status, amountReceived, amountConfirming, amountDue, amountOverpaid, confirmations, transfers; redirectUrl and message once it ends",
      tags,
      security: [],
      parameters: [id],
      responses: { '200': json('The session'), ...errors(404, 429) },
    },
  },
  '/v1/checkout/sessions/{id}/qr.svg': {
    get: { operationId: 'checkoutQrCode', summary: "The session's payment request (EIP-681) as an SVG QR code", tags, security: [], parameters: [id], responses: { '200': { description: 'SVG', content: { 'image/svg+xml': {} } }, ...errors(404, 429) } },
  },
};
