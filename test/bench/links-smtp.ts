// The SMTP sink of issue 29's benchmarks in a process of its own (not on the measured servers' event loop), as a
// production SMTP server is: `node test/bench/links-smtp.ts` prints `smtp://127.0.0.1:<port>` and serves until stdin
// closes. Messages are kept in memory (the last 100).
import { createSmtpSink } from '@sigil/local-stack';

const sink = await createSmtpSink({ maxMessages: 100 });
console.log(`smtp://${sink.host}:${sink.port}`);
process.stdin.resume();
process.stdin.on('end', () => void sink.stop().then(() => process.exit(0)));
