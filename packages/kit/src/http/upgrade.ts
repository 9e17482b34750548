import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';

/** Answers a request that asked to upgrade (a WebSocket) with a plain HTTP error: Strata's `{ error }` body. */
export function refuseUpgrade(socket: Duplex, status: number, message: string): void {
  const body = JSON.stringify({ error: message });
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
}
