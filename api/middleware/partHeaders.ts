/**
 * Bounds on the header lines of multipart parts. formidable limits file data, text fields and
 * how many of each, but gathers a part's headers into strings of any length and then runs a
 * regular expression over its Content-Disposition whose cost grows with the square of that
 * line: about 0.7 s for 96 KB of `filename="x"` repeated, minutes for a megabyte, all of it
 * on the event loop, for one request. A part's headers are therefore refused past
 * PART_HEADER_BYTES (a 4,096-byte deployment path with its name and type fits), and all the
 * parts' headers of one body past a budget that grows with the files it may carry, so no
 * body costs more than a moment to parse.
 *
 * This is a formidable plugin wrapping the multipart one: it listens to the same parser and,
 * at the first header chunk past a bound, destroys the parser with an AppError (413), so the
 * header is never completed and never matched.
 */
import type { Transform } from "node:stream";
import { multipart } from "formidable";
import { AppError } from "../../shared/errors.ts";

/** Bytes of header names and values one part may carry. */
export const PART_HEADER_BYTES = 8 * 1024;

/** Bytes of part headers one body may carry, all parts together. */
export const bodyHeaderBytes = (files: number) => 1024 * 1024 + 512 * files;

interface ParserEvent {
  name: string;
  start?: number;
  end?: number;
}

type Plugin = (formidable: unknown, options: unknown) => unknown;

/** The multipart plugin, with part headers bounded (see the module comment). */
export function boundedMultipart(files: number): Plugin {
  const total = bodyHeaderBytes(files);
  return function plugin(this: unknown, formidable, options) {
    const result = (multipart as unknown as Plugin).call(this, formidable, options);
    // The plugin keeps its parser here (formidable's own field, as its plugins all do).
    const parser = (formidable as { _parser?: Transform })._parser;
    if (!parser) return result;
    let part = 0;
    let all = 0;
    const refuse = (message: string) => parser.destroy(new AppError(413, "payload_too_large", message));
    parser.on("data", ({ name, start = 0, end = 0 }: ParserEvent) => {
      if (name === "partBegin") part = 0;
      if (name !== "headerField" && name !== "headerValue") return;
      part += end - start;
      all += end - start;
      if (part > PART_HEADER_BYTES) refuse(`A part's headers are too large: at most ${PART_HEADER_BYTES} bytes of headers per part.`);
      else if (all > total) refuse(`The parts' headers are too large: at most ${total} bytes of part headers may be sent at once.`);
    });
    return result;
  };
}
