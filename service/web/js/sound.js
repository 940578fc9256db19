// The optional turn sound: a short chime, made with WebAudio (no file fetched from anywhere),
// when it becomes your turn while the page is in the background. Off unless the player turns it
// on; the choice is kept in this browser.

const KEY = "cardroom.turnSound";
let context = null; // one AudioContext for the page, made on first use

export const soundOn = () => localStorage.getItem(KEY) === "on";

/** Turn the sound on or off. Turning it on is a click: the moment a browser lets a page start
 * its audio, so the chime may later play while the page is in the background. */
export function setSound(on) {
  if (on) localStorage.setItem(KEY, "on");
  else localStorage.removeItem(KEY);
  if (on) audio()?.resume();
}

function audio() {
  const Context = window.AudioContext || window.webkitAudioContext;
  if (!Context) return null; // no WebAudio: the title still says "Your turn"
  context ??= new Context();
  return context;
}

/** Two soft rising notes, about half a second in all. */
export function chime() {
  const ctx = audio();
  if (!ctx) return;
  ctx.resume();
  const start = ctx.currentTime + 0.01;
  [660, 880].forEach((frequency, i) => {
    const at = start + i * 0.16;
    const tone = ctx.createOscillator();
    const volume = ctx.createGain();
    tone.type = "sine";
    tone.frequency.value = frequency;
    volume.gain.setValueAtTime(0.0001, at);
    volume.gain.exponentialRampToValueAtTime(0.2, at + 0.02);
    volume.gain.exponentialRampToValueAtTime(0.0001, at + 0.3);
    tone.connect(volume).connect(ctx.destination);
    tone.start(at);
    tone.stop(at + 0.32);
  });
}
