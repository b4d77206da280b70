/**
 * A node's URL is a secret as much as an address: a provider's API key sits in its path or query
 * (`https://mainnet.infura.io/v3/KEY`), a password in its `user:password@`. Errors, logs and output
 * name a node by its origin only.
 */

/** The URL's scheme, host and port: never its `user:password@`, path or query. */
export function urlOrigin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'an invalid URL';
  }
}

/** The URL without its `user:password@`, and that as a basic-authentication header (fetch refuses such a URL). */
export function withoutCredentials(text: string): { url: string; authorization?: string } {
  let parsed: URL;
  try {
    parsed = new URL(text);
  } catch {
    return { url: text };
  }
  if (!parsed.username && !parsed.password) return { url: text };
  const decoded = (part: string) => {
    try {
      return decodeURIComponent(part);
    } catch {
      return part;
    }
  };
  const credentials = `${decoded(parsed.username)}:${decoded(parsed.password)}`;
  parsed.username = '';
  parsed.password = '';
  return { url: parsed.toString(), authorization: `Basic ${Buffer.from(credentials).toString('base64')}` };
}
