/** Reading a tool's output line by line, keeping none of it: decoded WAL and binlogs can be far larger than a mover's heap. */
import { spawn } from 'node:child_process';
import readline from 'node:readline';
import { StderrTail } from './tool-error.ts';

export interface LineReader {
  line(text: string): void;
}

/** Runs `command`, feeding every line of stdout and stderr to `reader`; answers the exit code and the end of stderr. */
export async function readToolLines(command: string, args: string[], env: NodeJS.ProcessEnv, reader: LineReader): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const tail = new StderrTail();
  const lines = (stream: NodeJS.ReadableStream) =>
    new Promise<void>((resolve) => {
      const rl = readline.createInterface({ input: stream, crlfDelay: Infinity });
      rl.on('line', (text) => reader.line(text));
      rl.once('close', resolve);
    });
  child.stderr.on('data', (chunk: Buffer) => tail.push(chunk));
  const exited = new Promise<number | null>((resolve, reject) => {
    child.once('error', (error) => reject(new Error(`${command} could not start: ${error.message}`)));
    child.once('close', (code) => resolve(code));
  });
  const [code] = await Promise.all([exited, lines(child.stdout), lines(child.stderr)]);
  return { code, stderr: tail.text() };
}
