/**
 * How wide help is written: the terminal's columns when the stream is one that knows its size, else COLUMNS (as
 * man and ls read it, for a pager or a script that says how wide it wants it), else 80; kept between 40 and 100 so
 * it stays readable. One answer for commander's help, the help topics and the examples they print.
 */
export function helpWidth(stream: { isTTY?: boolean; columns?: number }, columnsVariable: string | undefined): number {
  const fromTerminal = stream.isTTY && stream.columns ? stream.columns : undefined;
  const fromVariable = columnsVariable && /^[1-9]\d{0,4}$/.test(columnsVariable) ? Number(columnsVariable) : undefined;
  return Math.max(40, Math.min(fromTerminal ?? fromVariable ?? 80, 100));
}
