/** What a tool said: the end of its stderr, and the error a failed run becomes. */
/** A tool's failure, carrying what it printed. */
export class ToolError extends Error {
  readonly tool: string;
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stderr: string;
  constructor(tool: string, message: string, exitCode: number | null, signal: NodeJS.Signals | null, stderr: string) {
    super(message);
    this.name = 'ToolError';
    this.tool = tool;
    this.exitCode = exitCode;
    this.signal = signal;
    this.stderr = stderr;
  }
}

/** Keeps the last bytes a tool wrote to stderr. */
export class StderrTail {
  private chunks: Buffer[] = [];
  private size = 0;
  private readonly limit: number;
  private readonly progressLine: RegExp | undefined;
  /** `progressLine`: lines left out of what the tool said (progress reports, which explain no failure). */
  constructor(limit = 64 * 1024, progressLine?: RegExp) {
    this.limit = limit;
    this.progressLine = progressLine;
  }
  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.size > this.limit && this.chunks.length > 1) {
      this.size -= (this.chunks.shift() as Buffer).length;
    }
  }
  lines(): string[] {
    return Buffer.concat(this.chunks)
      .toString('utf8')
      .split(/\r\n|\r|\n/)
      .map((l) => l.trimEnd())
      .filter((l) => l.length > 0 && !this.progressLine?.test(l));
  }
  /** The last lines, at most maxChars long: what the tool said last is what explains its failure. */
  text(maxLines = 15, maxChars = 4000): string {
    const text = this.lines().slice(-maxLines).join('\n');
    return text.length > maxChars ? `…${text.slice(-maxChars)}` : text;
  }
}

/** A line of a tool's stderr that is a warning (kept in the manifest). */
export const WARNING = /\bwarning\b/i;

export function toolError(tool: string, code: number | null, signal: NodeJS.Signals | null, tail: StderrTail, stopped: boolean): ToolError {
  const said = tail.text();
  let message: string;
  if (stopped) message = `${tool} was stopped${said ? `: ${said}` : ''}`;
  else if (said) message = said;
  else if (signal) message = `${tool} was killed by ${signal}`;
  else message = `${tool} exited with code ${code}`;
  return new ToolError(tool, message, code, signal, tail.text(50, 16_000));
}

