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
