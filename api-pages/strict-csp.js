// Lets the bundled libraries run under the page's strict Content-Security-Policy, which admits no
// <style> element without the nonce the host made for this response (in <meta name="csp-nonce">).
// Its own script, first in each index.html: inside a library's bundle it would run after some of
// the library's module code.

// Scalar (Vue) and GraphiQL (Monaco) write their themes into <style> elements they create at run
// time: give each the nonce.
const nonce = document.querySelector('meta[name="csp-nonce"]')?.getAttribute('content');
if (nonce) {
  const createElement = Document.prototype.createElement;
  Document.prototype.createElement = function (tagName, options) {
    const element = createElement.call(this, tagName, options);
    if (String(tagName).toLowerCase() === 'style') element.nonce = nonce;
    return element;
  };
}
