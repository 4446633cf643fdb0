/**
 * The route fuzz (test/support/fuzz/run.ts) on a project that refuses changes: every operation
 * whose path names the fixture world's project or a resource inside it runs three times, with
 * that project locked, its subscription expired and archived (the first state picked by the
 * seed and the operation's id), set after the operation's fixtures exist. Besides the checks
 * of every fuzz part (no 5xx, only documented statuses, errors in their documented shape,
 * nothing written by a refused request, no success for a stranger, a healthy service at the
 * end), the file proves that no change succeeds in a refusing state unless its route is exempt
 * by design (test/support/fuzz/projectStates.ts lists them with their reasons), and that a
 * refusal names the state the project is in and is never given to a stranger. `FUZZ_SEED=<n>`
 * replays, `FUZZ_ONLY=<operationId>` narrows. About 25 s on an idle 2-core machine; the run's
 * budget ends it long before tap's timeout on a loaded one, saying so.
 */
import t from "tap";
import { fuzzProjectStates } from "../support/fuzz/run.ts";

fuzzProjectStates(t);
