/**
 * The operator console page (`/api/admin/console`) and its static files: the page, its
 * script and styles from api/console/, and uPlot from node_modules. The page is public (it
 * holds nothing); everything it shows comes from the admin routes with the operator's token.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { notFound } from "../../../shared/errors.ts";
import { defineRoute } from "../route.ts";

const own = fileURLToPath(new URL("../../console/", import.meta.url));
const uplot = path.join(path.dirname(createRequire(import.meta.url).resolve("uplot/package.json")), "dist");
/** Every file the page may load, read once: a fixed list, so no request names a path. */
const files: Record<string, { type: string; body: Buffer }> = {
  "index.html": { type: "text/html; charset=utf-8", body: readFileSync(path.join(own, "index.html")) },
  "console.js": { type: "text/javascript; charset=utf-8", body: readFileSync(path.join(own, "console.js")) },
  "console.css": { type: "text/css; charset=utf-8", body: readFileSync(path.join(own, "console.css")) },
  "uPlot.iife.min.js": { type: "text/javascript; charset=utf-8", body: readFileSync(path.join(uplot, "uPlot.iife.min.js")) },
  "uPlot.min.css": { type: "text/css; charset=utf-8", body: readFileSync(path.join(uplot, "uPlot.min.css")) },
};

const page = defineRoute({
  method: "get",
  path: "/admin/console",
  summary: "The operator console (HTML page)",
  tags: ["Admin"],
  auth: "public",
  hidden: true,
  responses: { 200: { description: "HTML page", contentType: "text/html" } },
  handler: (ctx) => {
    ctx.type = files["index.html"]!.type;
    ctx.set("Cache-Control", "no-cache");
    ctx.set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self' ws: wss:; img-src 'self' data:");
    ctx.body = files["index.html"]!.body;
  },
});

const asset = defineRoute({
  method: "get",
  path: "/admin/console/{file}",
  summary: "A static file of the operator console",
  tags: ["Admin"],
  auth: "public",
  hidden: true,
  params: z.object({ file: z.string().max(64) }),
  responses: { 200: { description: "The file" } },
  handler: (ctx, { params }) => {
    const file = Object.hasOwn(files, params.file) ? files[params.file] : undefined;
    if (!file) throw notFound("File");
    ctx.type = file.type;
    ctx.set("Cache-Control", "no-cache");
    ctx.body = file.body;
  },
});

export const adminConsoleRoutes = [page, asset];
