#!/usr/bin/env node
/**
 * The `schemaforge` executable. It turns on Node's compile cache before any of the service's
 * modules load, so a process after the first one on a machine skips most of the parsing and
 * type stripping of its ~2,000 modules (about a second of CPU per web or worker start). The
 * cache lives in the system's temporary folder unless `NODE_COMPILE_CACHE` names another;
 * `NODE_DISABLE_COMPILE_CACHE=1` turns it off. The commands are in main.ts.
 */
import { enableCompileCache } from "node:module";

enableCompileCache();
await import("./main.ts");
