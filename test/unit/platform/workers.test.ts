import { loopWorker, Worker, Workers } from '../../../src/platform/worker';

function recording(name: string, log: string[], failStart = false): Worker {
  return {
    async start() {
      log.push(`start ${name}`);
      if (failStart) throw new Error(`${name} could not start`);
    },
    async stop() {
      log.push(`stop ${name}`);
    },
  };
}

test('workers stop in the reverse order of their start, once', async () => {
  const log: string[] = [];
  const workers = new Workers();
  for (const name of ['relay', 'sender', 'watchers']) await workers.start(recording(name, log));
  await workers.stopAll();
  await workers.stopAll();
  expect(log).toEqual(['start relay', 'start sender', 'start watchers', 'stop watchers', 'stop sender', 'stop relay']);
});

test('a worker whose start failed is stopped with the others, so what it opened is closed', async () => {
  const log: string[] = [];
  const workers = new Workers();
  await workers.start(recording('relay', log));
  await expect(workers.start(recording('listener', log, true))).rejects.toThrow('listener could not start');
  await workers.stopAll();
  expect(log).toEqual(['start relay', 'start listener', 'stop listener', 'stop relay']);
});

test('a loop worker stops the loop its start returned, and stopping before start does nothing', async () => {
  const stopped: string[] = [];
  const worker = loopWorker(() => ({ stop: async () => void stopped.push('loop') }));
  await worker.stop();
  expect(stopped).toEqual([]);
  await worker.start();
  await worker.stop();
  await worker.stop();
  expect(stopped).toEqual(['loop']);
});
