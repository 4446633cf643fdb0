/**
 * The route fuzz (test/support/fuzz/run.ts) on a project that refuses changes: every operation
 * whose path names the fixture world's project or a resource inside it runs with that project
 * locked, its subscription expired or archived (one state per operation, picked by the seed and
 * the operation's id; other seeds pick others), set after its fixtures exist. Besides the
 * checks of every fuzz part (no 5xx, only documented statuses, errors in their documented
 * shape, nothing written by a refused request, no success for a stranger, a healthy service at
 * the end), the file proves that no valid change by the owner succeeds in a refusing state
 * unless its route is exempt by design (test/support/fuzz/projectStates.ts lists them with
 * their reasons), and that a refusal names the state the project is in. `FUZZ_SEED=<n>`
 * replays, `FUZZ_ONLY=<operationId>` narrows.
 */
import t from "tap";
import { fuzzProjectStates } from "../support/fuzz/run.ts";

fuzzProjectStates(t);
