import { Pool } from 'undici';
import type { FuzzRequest } from './fuzz-requests.ts';

/** One answer as the contract validator reads it. */
export interface Answer {
  status: number;
  headers: Headers;
  /** JSON parsed when it parses, the text otherwise; '' for an event stream (its headers are all that is checked). */
  body: unknown;
}

/**
 * Sends fuzzed requests to the gateway as they are: undici with a raw path (fetch would resolve `..` and re-encode),
 * bounded by a connection pool, each with its own deadline. An event stream is closed as soon as its headers arrive.
 */
export function createFuzzClient(gatewayUrl: string, connections: number) {
  const pool = new Pool(gatewayUrl, { connections, pipelining: 1, headersTimeout: 30_000, bodyTimeout: 30_000 });

  async function send(request: FuzzRequest): Promise<Answer> {
    const response = await pool.request({
      path: request.url,
      method: request.method as 'GET',
      headers: request.headers,
      body: request.body === undefined ? undefined : typeof request.body === 'string' ? request.body : Buffer.from(request.body),
    });
    const headers = new Headers();
    for (const [name, value] of Object.entries(response.headers)) {
      for (const one of Array.isArray(value) ? value : [value ?? '']) headers.append(name, one);
    }
    if ((headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      response.body.destroy();
      return { status: response.statusCode, headers, body: '' };
    }
    const text = await response.body.text();
    let body: unknown = text === '' ? undefined : text;
    try {
      if (text !== '') body = JSON.parse(text);
    } catch {
      // not JSON: validated as text
    }
    return { status: response.statusCode, headers, body };
  }

  return { send, close: () => pool.close() };
}

/**
 * A request as one `curl` line for a POSIX shell, each secret replaced by its placeholder (`$API_KEY`): exact bytes
 * (`$'\xHH'` for anything not printable ASCII), bodies over 4 kB abbreviated.
 */
export function curlOf(gatewayUrl: string, request: FuzzRequest, secrets: Record<string, string>): string {
  const hide = (text: string) => Object.entries(secrets).reduce((out, [placeholder, secret]) => out.split(secret).join(`\uE000${placeholder}\uE000`), text);
  const parts = ['curl', '-sS', '--path-as-is', '-X', request.method, shellWord(hide(`${gatewayUrl}${request.url}`))];
  for (const [name, value] of Object.entries(request.headers)) parts.push('-H', shellWord(hide(`${name}: ${value}`), 'latin1'));
  if (request.body !== undefined) {
    const bytes = typeof request.body === 'string' ? Buffer.from(request.body) : Buffer.from(request.body);
    const shown = bytes.length > 4_096 ? Buffer.concat([bytes.subarray(0, 300), Buffer.from(`…(${bytes.length} bytes in all)…`), bytes.subarray(-100)]) : bytes;
    parts.push('--data-binary', shellWord(hide(shown.toString('latin1')), 'latin1'));
  }
  return parts.join(' ');
}

/** One shell word: placeholders (between U+E000 marks) become `"$NAME"`, the rest single-quoted or `$'...'` with `\xHH` bytes. */
function shellWord(text: string, encoding: 'utf8' | 'latin1' = 'utf8'): string {
  return text
    .split('\uE000')
    .map((piece, i) => {
      if (i % 2 === 1) return `"${piece}"`;
      if (piece === '') return '';
      const bytes = Buffer.from(piece, encoding);
      if (bytes.every((b) => b >= 0x20 && b < 0x7f)) return `'${piece.replace(/'/g, `'\\''`)}'`;
      return `$'${[...bytes].map((b) => (b >= 0x20 && b < 0x7f && b !== 0x27 && b !== 0x5c ? String.fromCharCode(b) : `\\x${b.toString(16).padStart(2, '0')}`)).join('')}'`;
    })
    .join('');
}
