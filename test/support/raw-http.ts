import { connect } from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: any;
}

/**
 * Sends bytes exactly as given over a plain TCP socket and reads until the server closes or the
 * response is complete, for requests fetch would refuse or rewrite (oversized headers, raw encodings).
 */
export function rawRequest(url: string, bytes: string | Buffer, timeoutMs = 5000): Promise<RawResponse> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete response within ${timeoutMs} ms: ${Buffer.concat(chunks).toString()}`));
    }, timeoutMs);
    const finish = () => {
      const parsed = parse(Buffer.concat(chunks).toString('utf8'));
      if (!parsed) return false;
      clearTimeout(timer);
      socket.destroy();
      resolve(parsed);
      return true;
    };
    socket.on('data', (d) => {
      chunks.push(d);
      finish();
    });
    // The server may close while we are still writing an oversized request.
    socket.on('error', () => undefined);
    socket.on('close', () => {
      if (!finish()) {
        clearTimeout(timer);
        reject(new Error(`connection closed before a complete response: ${Buffer.concat(chunks).toString()}`));
      }
    });
    socket.write(bytes);
  });
}

function parse(text: string): RawResponse | undefined {
  const end = text.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const i = line.indexOf(':');
    headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  const length = Number(headers['content-length'] ?? NaN);
  const rawBody = text.slice(end + 4);
  if (Number.isNaN(length) || Buffer.byteLength(rawBody) < length) return undefined;
  let body: unknown = rawBody;
  try {
    body = JSON.parse(rawBody);
  } catch {
    // not JSON: keep the text
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body };
}
