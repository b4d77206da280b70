import type { Duplex } from 'node:stream';

const corked = new WeakSet<Duplex>();

/**
 * Holds a socket's writes until the event loop's next turn, so the messages sent to it meanwhile
 * (a commit's book change and its trades, to each of a connection's subscriptions) leave in one
 * write instead of one system call each.
 */
export function coalesceWrites(socket: Duplex | undefined): void {
  if (!socket || corked.has(socket) || socket.destroyed) return;
  corked.add(socket);
  socket.cork();
  setImmediate(() => {
    corked.delete(socket);
    socket.uncork();
  });
}
