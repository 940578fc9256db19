// Sushi Go!'s card faces, drawn for this project (simple shapes, no licensed art): one small SVG
// per card kind, built as elements (the page's CSP allows no inline markup or styles). Each face is
// decorative: the card's name and its value are text beside it.
const NS = "http://www.w3.org/2000/svg";

// What each card is worth and how its set scores, on its face (the rulings S10–S15 in full).
export const FACES = {
  tempura: "pair = 5",
  sashimi: "3 = 10",
  dumpling: "1·3·6·10·15",
  maki_1: "● most: 6 · 2nd: 3",
  maki_2: "●● most: 6 · 2nd: 3",
  maki_3: "●●● most: 6 · 2nd: 3",
  egg_nigiri: "1",
  salmon_nigiri: "2",
  squid_nigiri: "3",
  wasabi: "next nigiri ×3",
  pudding: "end: most +6, fewest −6",
  chopsticks: "later: take 2",
};
export const NIGIRI_POINTS = { egg_nigiri: 1, salmon_nigiri: 2, squid_nigiri: 3 };

function el(tag, attrs, ...children) {
  const node = document.createElementNS(NS, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  node.append(...children);
  return node;
}

const rice = (y = 27) => el("rect", { x: 7, y, width: 26, height: 9, rx: 4.5, fill: "#fffdf6", stroke: "#8a8170" });
const band = (y) => el("rect", { x: 17, y, width: 6, height: 15, fill: "#24362b" });
const stripes = (y, colour) => [10, 17, 24].map((x) => el("path", { d: `M${x} ${y + 9} l5 -8`, stroke: colour, "stroke-width": 1.6 }));

const DRAW = {
  tempura: () => [
    el("path", { d: "M9 30 C6 18 18 8 30 11 C24 14 17 20 17 31 Z", fill: "#f2b134", stroke: "#9a5b10" }),
    el("path", { d: "M12 26 l4 -2 M14 20 l4 -1 M19 15 l3 0", stroke: "#9a5b10", "stroke-width": 1.5 }),
    el("path", { d: "M29 11 l6 -5 l-1 8 Z", fill: "#e0573b" }),
  ],
  sashimi: () => [0, 1, 2].map((i) =>
    el("g", { transform: `translate(${i * 7 - 7} ${i * 2})` },
      el("rect", { x: 10, y: 10, width: 14, height: 20, rx: 3, fill: "#f58a6c", stroke: "#b0452c" }),
      el("path", { d: "M12 16 l10 -3 M12 22 l10 -3 M12 28 l10 -3", stroke: "#fde1d6", "stroke-width": 1.4 }))),
  dumpling: () => [
    el("path", { d: "M5 28 Q20 2 35 28 Z", fill: "#f6ecd3", stroke: "#8a7a55", "stroke-width": 1.5 }),
    el("path", { d: "M11 20 q2 3 4 0 q2 3 4 0 q2 3 4 0 q2 3 4 0", fill: "none", stroke: "#8a7a55", "stroke-width": 1.3 }),
    el("path", { d: "M5 28 H35", stroke: "#8a7a55", "stroke-width": 1.5 }),
  ],
  maki: (icons) => [
    el("circle", { cx: 20, cy: 22, r: 13, fill: "#24362b" }),
    el("circle", { cx: 20, cy: 22, r: 9.5, fill: "#fffdf6" }),
    el("circle", { cx: 20, cy: 22, r: 4, fill: "#e0573b" }),
    ...Array.from({ length: icons }, (_, i) => el("circle", { cx: 20 + (i - (icons - 1) / 2) * 8, cy: 5, r: 3, fill: "#b3261e" })),
  ],
  egg_nigiri: () => [rice(), el("rect", { x: 6, y: 17, width: 28, height: 11, rx: 4, fill: "#f7d64a", stroke: "#a88a10" }), band(15)],
  salmon_nigiri: () => [rice(), el("rect", { x: 6, y: 17, width: 28, height: 11, rx: 5, fill: "#f58a6c", stroke: "#b0452c" }), ...stripes(18, "#fde1d6")],
  squid_nigiri: () => [rice(), el("path", { d: "M6 27 Q6 15 20 16 Q34 15 34 27 Z", fill: "#eef2f7", stroke: "#7a8799" }),
    el("path", { d: "M10 27 v6 M15 27 v7 M25 27 v7 M30 27 v6", stroke: "#7a8799", "stroke-width": 1.5 })],
  // Zoch's own cards (the same kinds, S1's table): tuna is dark red, not squid's white; mussels
  // are two dark shells, not a dumpling (issue 39, item 11).
  tuna_nigiri: () => [rice(), el("rect", { x: 6, y: 17, width: 28, height: 11, rx: 3, fill: "#b8233a", stroke: "#6e1020" }),
    el("path", { d: "M11 19 l3 7 M19 19 l3 7 M27 19 l3 7", stroke: "#e36a7c", "stroke-width": 1.3 })],
  mussels: () => [-1, 1].map((side) =>
    el("g", { transform: `translate(${20 + side * 8} 21) rotate(${side * 25})` },
      el("ellipse", { cx: 0, cy: 0, rx: 7, ry: 13, fill: "#27304a", stroke: "#0f1424", "stroke-width": 1.3 }),
      el("path", { d: "M-4 -6 q4 3 8 0 M-5 1 q5 3 10 0 M-4 8 q4 2 8 0", fill: "none", stroke: "#6f7da3", "stroke-width": 1.1 }))),
  wasabi: () => [el("path", { d: "M8 30 Q6 18 14 16 Q16 8 23 11 Q32 10 31 19 Q36 26 29 31 Z", fill: "#8cc63f", stroke: "#4d7a16", "stroke-width": 1.5 }),
    el("path", { d: "M16 22 q4 -4 8 0", fill: "none", stroke: "#4d7a16", "stroke-width": 1.4 })],
  pudding: () => [el("path", { d: "M10 32 L13 13 H27 L30 32 Z", fill: "#f7d98b", stroke: "#a3781d" }),
    el("path", { d: "M13 13 H27 L26 18 Q20 21 14 18 Z", fill: "#7a3e12" }),
    el("rect", { x: 6, y: 32, width: 28, height: 3, rx: 1.5, fill: "#c9c2b4" })],
  chopsticks: () => [el("path", { d: "M8 35 L27 5", stroke: "#a0522d", "stroke-width": 3, "stroke-linecap": "round" }),
    el("path", { d: "M14 36 L33 7", stroke: "#c46a3a", "stroke-width": 3, "stroke-linecap": "round" })],
};

/** The face of a card kind, or of an edition's own card (`tuna_nigiri`, `mussels`): an <svg>
 * (40×40 units; its size is the stylesheet's). */
export function art(kind) {
  const maki = /^maki_(\d)$/.exec(kind);
  const draw = maki ? () => DRAW.maki(Number(maki[1])) : DRAW[kind];
  if (!draw) return null;
  return el("svg", { class: "art", viewBox: "0 0 40 40", "aria-hidden": "true", focusable: "false" }, ...draw());
}
