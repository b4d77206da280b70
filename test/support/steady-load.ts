/** One request of a steady load: what came back and how long it took (status 0: no answer within the client's limit). */
export interface Sample {
  name: string;
  status: number;
  /** When it was sent, in ms since the load started. */
  at: number;
  ms: number;
  body: unknown;
}

export interface LoadRequest {
  name: string;
  url: string;
  init?: RequestInit;
}

export interface SteadyLoad {
  readonly samples: Sample[];
  /** Ms since the load started, on the samples' clock (to mark when a fault begins). */
  elapsed(): number;
  stop(): Promise<Sample[]>;
}

/**
 * Each request in `requests` runs in its own loop, one at a time with `pauseMs` between, until
 * stop(); every answer's latency is recorded. A client gives up after `giveUpMs` so a hang shows as
 * a slow sample instead of a stuck test.
 */
export function steadyLoad(requests: LoadRequest[], pauseMs: number, giveUpMs = 5_000): SteadyLoad {
  const samples: Sample[] = [];
  let running = true;
  const origin = performance.now();
  const loop = async (request: LoadRequest) => {
    while (running) {
      const started = performance.now();
      let status = 0;
      let body: unknown;
      try {
        const res = await fetch(request.url, { ...request.init, signal: AbortSignal.timeout(giveUpMs) });
        status = res.status;
        const text = await res.text();
        try {
          body = JSON.parse(text);
        } catch {
          body = text;
        }
      } catch (error) {
        body = String(error);
      }
      samples.push({ name: request.name, status, at: started - origin, ms: performance.now() - started, body });
      await new Promise((r) => setTimeout(r, pauseMs));
    }
  };
  const loops = requests.map(loop);
  return {
    samples,
    elapsed: () => performance.now() - origin,
    async stop() {
      running = false;
      await Promise.all(loops);
      return samples;
    },
  };
}

/**
 * What a fault test allows beyond a documented latency bound for this shared machine's scheduling
 * (the suite's other files run beside it on two cores); a hang still shows, as clients wait up to 5 s.
 */
export const SCHEDULING_SLACK_MS = 1_000;

/**
 * The samples answered later than `boundMs` (plus the scheduling slack) after the fault began or
 * they were sent, whichever came later (a request already slow when the fault began is not the
 * fault's), or not at all; described for an assertion's message.
 */
export function answeredLate(samples: Sample[], boundMs: number, faultAt: number): string[] {
  const waited = (s: Sample) => s.at + s.ms - Math.max(s.at, faultAt);
  return samples
    .filter((s) => s.status === 0 || waited(s) > boundMs + SCHEDULING_SLACK_MS)
    .map((s) => `${s.name} ${s.status} ${Math.round(waited(s))} ms after the fault or its sending (sent at ${Math.round(s.at)} ms, fault at ${Math.round(faultAt)})`);
}

/** The headers of an authenticated JSON request with an organisation's admin key. */
export function adminHeaders(org: { adminKey: string; orgId: string }): Record<string, string> {
  return { apiKey: org.adminKey, orgId: org.orgId, 'content-type': 'application/json' };
}

/** Sends each request once: the first of each kind compiles its code paths, and a bound is about outages, not that. */
export async function warmUp(requests: LoadRequest[]): Promise<void> {
  for (const r of requests) await fetch(r.url, r.init);
}
