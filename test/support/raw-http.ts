import { connect, Socket } from 'node:net';

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
  return parseFrom(Buffer.from(text, 'utf8'))?.response;
}

/** The response at the start of `data` and its size in bytes, once it is complete (it has a Content-Length). */
function parseFrom(data: Buffer): { response: RawResponse; size: number } | undefined {
  const end = data.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const [statusLine, ...lines] = data.subarray(0, end).toString('utf8').split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const i = line.indexOf(':');
    headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  const length = Number(headers['content-length'] ?? NaN);
  if (Number.isNaN(length) || data.length - (end + 4) < length) return undefined;
  const rawBody = data.subarray(end + 4, end + 4 + length).toString('utf8');
  let body: unknown = rawBody;
  try {
    body = JSON.parse(rawBody);
  } catch {
    // not JSON: keep the text
  }
  return { response: { status: Number(statusLine.split(' ')[1]), headers, body }, size: end + 4 + length };
}

/** Every response a connection gets, in order (pipelined requests), read until the server closes it. */
export function responsesUntilClose(socket: Socket, timeoutMs = 5000): Promise<RawResponse[]> {
  const chunks: Buffer[] = [];
  socket.on('data', (d: Buffer) => chunks.push(d));
  socket.on('error', () => undefined);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the server did not close the connection within ${timeoutMs} ms: ${Buffer.concat(chunks).toString()}`));
    }, timeoutMs);
    socket.on('close', () => {
      clearTimeout(timer);
      const responses: RawResponse[] = [];
      let data = Buffer.concat(chunks);
      for (let next = parseFrom(data); next; next = parseFrom(data)) {
        responses.push(next.response);
        data = data.subarray(next.size);
      }
      resolve(responses);
    });
  });
}
