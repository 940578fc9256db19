// Small DOM helpers. Text always goes in as text (never as HTML): names come from other players.
import { troubles } from "./api.js";

// Handlers and properties are kept on the element (morph.js hands a new render's to the node it
// keeps): one listener per event type calls whichever handler the element holds now.
function dispatch(event) {
  event.currentTarget.$on?.[event.type]?.(event);
}

export function listen(el, type, handler) {
  el.$on ??= {};
  if (!el.$on[type]) el.addEventListener(type, dispatch);
  el.$on[type] = handler;
}

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key.startsWith("on")) listen(el, key.slice(2), value);
    else if (key in el && typeof value !== "string") (el.$props ??= {})[key] = el[key] = value;
    else el.setAttribute(key, value === true ? "" : value);
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

let noticeTimer;

/** Shows a message in words (an API problem's detail, or ours) at the top of the page. */
export function notify(message, kind = "error") {
  const box = document.getElementById("notice");
  box.textContent = message;
  box.className = `notice ${kind}`;
  box.hidden = false;
  clearTimeout(noticeTimer);
  if (kind !== "error") noticeTimer = setTimeout(() => (box.hidden = true), 4000);
}

export function clearNotice() {
  document.getElementById("notice").hidden = true;
}

/** The service answers again: take down a notice that said it could not be reached. */
export function clearTroubleNotice() {
  const box = document.getElementById("notice");
  if (!box.hidden && troubles.has(box.textContent)) box.hidden = true;
}

export function when(iso) {
  const date = new Date(iso);
  return isNaN(date) ? "" : date.toLocaleString();
}

export function plural(n, one, many = `${one}s`) {
  return `${n} ${n === 1 ? one : many}`;
}
