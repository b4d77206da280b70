// Runs before the reference's bundle (its own script, first in index.html): see ../strict-csp.js.
import '../strict-csp.js';
import { config } from 'zod';

// Zod (inside Scalar) probes whether it may compile validators with `new Function`; the policy
// forbids eval, and the probe alone is reported as a violation. Jitless: no probe. Every copy of
// zod shares this setting (zod keeps it on globalThis).
config({ jitless: true });
