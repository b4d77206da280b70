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

/** A URL in running text: a scheme, `//`, and everything up to a space, a quote or a bracket. */
const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'`<>()[\]{}]+/gi;

/**
 * `text` with every URL in it cut to its scheme, host and port. A node's or provider's URL often
 * carries its key in the path, the query or the user info (`https://host/v2/<key>`), and errors
 * quote the URL they failed on (ethers' `info={"requestUrl":…}`): such text may then be logged.
 */
export function withUrlsAsOrigins(text: string): string {
  return text.replace(URL_IN_TEXT, (found) => {
    try {
      const url = new URL(found);
      return `${url.protocol}//${url.host}`;
    } catch {
      return 'a URL';
    }
  });
}
