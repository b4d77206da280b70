/**
 * Runs `step` again `intervalMs` after each run ends (never two at once) until stopped; a failed
 * step is reported and the loop goes on. stop() waits for a step in progress.
 */
export function startPollingLoop(step: () => Promise<unknown>, intervalMs: number, onError: (e: unknown) => void): { stop(): Promise<void> } {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;
  const loop = async () => {
    running = step().then(
      () => undefined,
      (e) => onError(e),
    );
    await running;
    if (!stopped) timer = setTimeout(loop, intervalMs);
  };
  timer = setTimeout(loop, 0);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
