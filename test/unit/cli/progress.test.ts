import { Progress, ProgressStream } from '../../../src/cli/progress';

/** A stream that records what is written to it, a terminal or not. */
function stream(isTTY: boolean): ProgressStream & { text: string } {
  return {
    isTTY,
    text: '',
    write(chunk: string) {
      this.text += chunk;
      return true;
    },
  };
}

describe('Progress of a long command', () => {
  it('on a terminal rewrites one line in place and clears it when done', () => {
    const tty = stream(true);
    const progress = new Progress(tty);
    progress.update('reading 1/2');
    progress.update('reading 2/2');
    progress.done();
    progress.done();
    expect(tty.text).toBe('\r\x1b[2Kreading 1/2\r\x1b[2Kreading 2/2\r\x1b[2K');
  });

  it('writes nothing when the stream is not a terminal (a pipe, a log, CI)', () => {
    const pipe = stream(false);
    const progress = new Progress(pipe);
    progress.update('reading 1/2');
    progress.done();
    expect(pipe.text).toBe('');
  });

  it('writes nothing with --json, even on a terminal', () => {
    const tty = stream(true);
    const progress = new Progress(tty, { json: true });
    progress.update('reading 1/2');
    progress.done();
    expect(tty.text).toBe('');
  });
});
