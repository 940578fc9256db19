// Small DOM helpers. Text always goes in as text (never as HTML): names come from other players.
import { troubles } from "./api.js";

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key in el && typeof value !== "string") el[key] = value;
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
