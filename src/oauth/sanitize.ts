/** Server-supplied text made safe to show: one line, no control characters, bounded. */
export function sanitize(text: unknown, max = 200): string {
  const s = String(text ?? '')
    .replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ')
    .trim();
  return s.length > max ? `${s.slice(0, max)}…` : s;
}

