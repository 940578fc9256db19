// The optional turn sound: a short chime, made with WebAudio (no file fetched from anywhere),
// when it becomes your turn while the page is in the background. Loaded only once a player
// turns the sound on (play.js keeps the choice).

let context = null; // one AudioContext for the page, made on first use

/** Called from the click that turns the sound on: the moment a browser lets a page start its
 * audio, so that the chime may later play while the page is in the background. */
export function prime() {
  audio()?.resume();
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
