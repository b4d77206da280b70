/** Where progress goes: stderr, or in tests any stream that says whether it is a terminal. */
export interface ProgressStream {
  isTTY?: boolean;
  write(text: string): unknown;
}

/**
 * The progress of a long operator command, as one line rewritten in place on a terminal. Silent
 * when the stream is not a terminal (a pipe, a log file, CI) or the command was given `--json`,
 * so a script reading the result sees nothing but the JSON line on stdout.
 */
export class Progress {
  private shown = false;
  private readonly enabled: boolean;

  constructor(
    private readonly stream: ProgressStream = process.stderr,
    opts: { json?: boolean } = {},
  ) {
    this.enabled = stream.isTTY === true && !opts.json;
  }

  /** Replaces the line with `text`. */
  update(text: string): void {
    if (!this.enabled) return;
    this.stream.write(`\r\x1b[2K${text}`);
    this.shown = true;
  }

  /** Clears the line, before the result is printed. */
  done(): void {
    if (!this.shown) return;
    this.stream.write('\r\x1b[2K');
    this.shown = false;
  }
}
