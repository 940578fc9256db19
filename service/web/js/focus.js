// Re-rendering on every live update must not throw away keyboard focus: remember what had it (by
// id or data attributes) and give it back to the matching element of the new render.

export function focusKey() {
  const el = document.activeElement;
  if (!el || el === document.body) return null;
  if (el.id) return `#${CSS.escape(el.id)}`;
  const attrs = Object.entries(el.dataset).map(([k, v]) => `[data-${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}="${CSS.escape(v)}"]`);
  return attrs.length ? `${el.tagName.toLowerCase()}${attrs.join("")}` : null;
}

export function restoreFocus(key, root = document) {
  if (!key) return;
  const el = root.querySelector(key);
  if (el && !el.disabled) el.focus({ preventScroll: true });
}
