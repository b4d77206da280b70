import { h } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import htm from 'htm';
import { gql } from './api.js';

export const html = htm.bind(h);

/** Runs a query now and whenever `refresh` changes; `every` (ms) polls it too. */
export function useQuery(query, variables, deps = [], every = 0) {
  const [state, setState] = useState({ data: null, error: null, loading: true });
  const seq = useRef(0);
  const run = useCallback(async () => {
    const mine = ++seq.current;
    try {
      const data = await gql(query, variables);
      if (mine === seq.current) setState({ data, error: null, loading: false });
    } catch (e) {
      if (mine === seq.current) setState((s) => ({ data: s.data, error: e.message, loading: false }));
    }
  }, [query, JSON.stringify(variables)]);
  useEffect(() => {
    run();
    if (!every) return undefined;
    const timer = setInterval(run, every);
    return () => clearInterval(timer);
  }, [run, every, ...deps]);
  return { ...state, reload: run };
}

/** A mutation with its pending state and error, for forms and buttons. */
export function useAction(onDone) {
  const [state, setState] = useState({ busy: false, error: null });
  const run = async (fn) => {
    setState({ busy: true, error: null });
    try {
      const result = await fn();
      setState({ busy: false, error: null });
      onDone?.(result);
      return result;
    } catch (e) {
      setState({ busy: false, error: e.message });
      return undefined;
    }
  };
  return { ...state, run };
}

export const ErrorNote = ({ error }) => (error ? html`<p class="error" role="alert">${error}</p>` : null);

export function Field({ id, label, children, hint }) {
  return html`<div class="field"><label for=${id}>${label}</label>${children}${hint ? html`<small id=${`${id}-hint`}>${hint}</small>` : null}</div>`;
}

/** Form values by field name. */
export function formValues(event) {
  event.preventDefault();
  return Object.fromEntries(new FormData(event.currentTarget).entries());
}

export const when = (iso) => (iso ? new Date(iso).toLocaleString() : '—');
export const short = (id) => (id ? `${id.slice(0, 8)}…` : '—');

export function Table({ caption, columns, rows, empty = 'Nothing yet', rowKey = (r) => r.id, rowAttrs = () => ({}) }) {
  return html`<div class="table-wrap" tabindex="0" role="region" aria-label=${caption}>
    <table>
      <caption>${caption}</caption>
      <thead><tr>${columns.map((c) => html`<th scope="col">${c.label}</th>`)}</tr></thead>
      <tbody>
        ${rows.length === 0 ? html`<tr><td colspan=${columns.length}>${empty}</td></tr>` : rows.map((r) => html`<tr key=${rowKey(r)} ...${rowAttrs(r)}>${columns.map((c) => html`<td data-label=${c.label}>${c.render ? c.render(r) : r[c.key]}</td>`)}</tr>`)}
      </tbody>
    </table>
  </div>`;
}

/** A secret shown once, right after Keel made it: the console keeps no copy. */
export function SecretOnce({ title, secret, onDismiss }) {
  const ref = useRef(null);
  useEffect(() => ref.current?.focus(), []);
  return html`<section class="secret" role="status" aria-labelledby="secret-title" tabindex="-1" ref=${ref}>
    <h3 id="secret-title">${title}</h3>
    <p>Copy it now: Keel shows it only this once and the console does not keep it.</p>
    <code class="secret-value" data-testid="secret">${secret}</code>
    <button type="button" onClick=${onDismiss}>I have copied it</button>
  </section>`;
}
