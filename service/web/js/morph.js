// Live updates change only what changed: a new render is laid over the nodes on screen, which
// are kept wherever they match (same tag, same key: id or data-key), so that focus, a text
// selection, an open <details> and the nodes of a hand nobody touched stay as they are.
import { listen } from "./ui.js";

const keyOf = (node) => (node.nodeType === 1 ? node.id || node.dataset.key || null : null);
const same = (a, b) => a.nodeType === b.nodeType && a.nodeName === b.nodeName;

/** Make `parent`'s children match `next` (freshly rendered nodes). */
export function morph(parent, next) {
  const old = [...parent.childNodes];
  const keyed = new Map(old.filter(keyOf).map((node) => [keyOf(node), node]));
  const kept = new Set();
  const result = [];
  let at = 0; // the next old unkeyed node to match
  for (const node of next) {
    const key = keyOf(node);
    let match = null;
    if (key) match = keyed.get(key);
    else {
      for (let i = at; i < old.length; i++) {
        if (keyOf(old[i]) || kept.has(old[i]) || !same(old[i], node)) continue;
        match = old[i];
        at = i + 1;
        break;
      }
    }
    if (match && !kept.has(match) && same(match, node)) {
      kept.add(match);
      patch(match, node);
      result.push(match);
    } else result.push(node);
  }
  for (const node of old) if (!kept.has(node)) node.remove();
  let cursor = parent.firstChild;
  for (const node of result) {
    if (node === cursor) cursor = cursor.nextSibling;
    else parent.insertBefore(node, cursor);
  }
}

function patch(el, fresh) {
  if (el.nodeType !== 1) {
    if (el.data !== fresh.data) el.data = fresh.data;
    return;
  }
  for (const { name, value } of fresh.attributes) if (el.getAttribute(name) !== value) el.setAttribute(name, value);
  for (const { name } of [...el.attributes]) {
    // An open <details> stays open: the person opened it (a render may open it, never close it).
    if (!fresh.hasAttribute(name) && !(name === "open" && el.nodeName === "DETAILS")) el.removeAttribute(name);
  }
  for (const [type, handler] of Object.entries(fresh.$on || {})) listen(el, type, handler);
  for (const type of Object.keys(el.$on || {})) if (!fresh.$on?.[type]) el.$on[type] = null;
  for (const [key, value] of Object.entries(fresh.$props || {})) if (el[key] !== value) el[key] = value;
  for (const key of Object.keys(el.$props || {})) {
    if (!(key in (fresh.$props || {})) && key !== "open") el[key] = typeof el[key] === "boolean" ? false : el[key];
  }
  el.$props = fresh.$props;
  morph(el, [...fresh.childNodes]);
}
