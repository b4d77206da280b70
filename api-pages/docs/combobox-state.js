// Scalar's authentication inputs are contenteditable elements with role="combobox" but without the
// aria-expanded state the role requires (axe: aria-required-attr). Until Scalar sets it, give each
// such element aria-expanded="false" as it appears: none of them opens a list.
const MISSING = '[role="combobox"]:not([aria-expanded])';

function settle(root) {
  for (const element of root.querySelectorAll(MISSING)) element.setAttribute('aria-expanded', 'false');
}

export function keepComboboxStates(root) {
  settle(root);
  new MutationObserver(() => settle(root)).observe(root, { childList: true, subtree: true });
}
