import { Merchant, paymentWorld, publicClient, TestKeel } from './support';

/**
 * A slug once used by an organisation is never handed to another: a payer holding an old link or
 * QR code must never pay someone else, whether the link was renamed or deleted.
 */
describe('a payment-link slug is never reassigned to another organisation', () => {
  const world = paymentWorld(['payment_link.*']);
  let t: TestKeel, m: Merchant, other: Merchant;
  beforeAll(() => {
    ({ t, m, other } = world);
  });

  const createLink = (owner: Merchant, slug: string) =>
    owner.org.core.post('/v1/payment/links', { name: 'Tea', currency: 'USD', amount: '1', evmSettlementWalletId: owner.wallet.id, slug });
  const expectTaken = (res: { status: number; body: any }) => {
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({ code: 'DUPLICATE_ENTRY', details: { fields: [{ field: 'slug', error: 'is taken' }] } });
  };
  const unique = (name: string) => `${name}-${Date.now().toString(36)}`;

  test('after a rename: another organisation cannot take the old slug, on create or on update; the owner can use it again', async () => {
    const slug = unique('renamed-shop');
    const link = (await createLink(m, slug)).body.data;
    expect((await m.org.core.request('PUT', `/v1/payment/links/${link.id}`, { body: { slug: `${slug}-2` } })).status).toBe(200);

    expectTaken(await createLink(other, slug));
    const theirs = (await createLink(other, unique('their-shop'))).body.data;
    expectTaken(await other.org.core.request('PUT', `/v1/payment/links/${theirs.id}`, { body: { slug } }));
    expect((await publicClient(t).get(`/v1/checkout/links/${slug}`)).status).toBe(404);

    const back = await m.org.core.request('PUT', `/v1/payment/links/${link.id}`, { body: { slug } });
    expect(back.status).toBe(200);
    expect(back.body.data.slug).toBe(slug);
  });

  test("a link's own slug in other letter case is its slug, not one taken: the update keeps it", async () => {
    const slug = unique('case-shop');
    const link = (await createLink(m, slug)).body.data;
    const same = await m.org.core.request('PUT', `/v1/payment/links/${link.id}`, { body: { slug: slug.toUpperCase(), name: 'Tea, renamed' } });
    expect([same.status, same.body.data?.slug, same.body.data?.name]).toEqual([200, slug, 'Tea, renamed']);
    // Another link of the same organisation asking for it in any case still finds it taken.
    const second = (await createLink(m, unique('case-shop-2'))).body.data;
    expectTaken(await m.org.core.request('PUT', `/v1/payment/links/${second.id}`, { body: { slug: slug.toUpperCase() } }));
  });

  test('after a deletion: the slug stays taken for everyone else', async () => {
    const slug = unique('deleted-shop');
    const link = (await createLink(m, slug)).body.data;
    expect((await m.org.core.delete(`/v1/payment/links/${link.id}`)).status).toBe(200);
    expectTaken(await createLink(other, slug));
  });

  test('two organisations asking for one new slug at once: exactly one gets it', async () => {
    const slug = unique('raced-shop');
    const [a, b] = await Promise.all([createLink(m, slug), createLink(other, slug)]);
    expect([a.status, b.status].sort()).toEqual([201, 409]);
    const owner = await t.keel.platform.db('payment_link_slugs').where({ slug }).first();
    expect(owner.organizationId).toBe((a.status === 201 ? m : other).org.orgId);
  });
});
