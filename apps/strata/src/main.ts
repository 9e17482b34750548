// Entry point: runs the CLI with the process's streams (started by bin/strata.js).
import { runCli } from './cli.ts';

const controller = new AbortController();
let interrupted = false;
process.on('SIGINT', () => {
  // The first Ctrl-C stops the running command cleanly; a second one exits at once.
  if (interrupted) process.exit(130);
  interrupted = true;
  controller.abort();
});
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  // `strata events | head` closes the pipe early.
  if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw err;
});

process.exitCode = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  stdin: process.stdin,
  signal: controller.signal,
});
