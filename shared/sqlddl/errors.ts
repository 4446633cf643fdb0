/**
 * The one error the parser throws: the input held nothing it could understand (or was
 * empty, binary or garbage). Line and column point at the first problem, so the endpoint
 * can answer 422 naming them.
 */
export class DdlParseError extends Error {
  readonly line: number;
  readonly column: number;

  constructor(message: string, line: number, column: number) {
    super(`${message} (line ${line}, column ${column})`);
    this.name = "DdlParseError";
    this.line = line;
    this.column = column;
  }
}
