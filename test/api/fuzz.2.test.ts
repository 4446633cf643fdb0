/**
 * Every route fuzzed from the OpenAPI document (issue 14, item 2), part 2 of 3: the
 * operations whose id hashes to this part (test/support/fuzz/run.ts). Each gets valid
 * requests generated from its documented schemas as the owner, a stranger and without a
 * token, and invalid ones (one mutation each); the file proves no 5xx, only documented
 * statuses, errors in their documented shape, 401 without a token, no success for a
 * stranger on the owner's resources, nothing written by a refused request, and a healthy
 * service at the end. The seed is printed; `FUZZ_SEED=<n>` replays, `FUZZ_ONLY=<operationId>`
 * narrows. Its own time budget ends the run long before tap's timeout, saying so.
 */
import t from "tap";
import { fuzzPart } from "../support/fuzz/run.ts";

fuzzPart(t, 2, 3);
