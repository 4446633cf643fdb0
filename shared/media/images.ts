/**
 * Uploaded images, checked by their content and re-encoded before anything stores them:
 * template media now, store media next. One entry point, `checkImage`, takes the uploaded
 * bytes and either refuses them with an `ImageRejected` (a code and a message meant for the
 * uploader) or answers the bytes to store with their type, size and dimensions.
 *
 * What it guarantees about what it answers:
 * - a raster image in one of `imageFormats`, recognised by its signature (never by the file
 *   name or the client's content type), decoded in full by libvips (sharp);
 * - no SVG, HTML or other text format: SVG is refused outright, because it is a document
 *   that can carry scripts and external references, and a sanitiser is one parser bug away
 *   from serving script on our origin;
 * - bounded: at most `maxBytes` uploaded, `maxPixels` decoded (libvips refuses larger
 *   inputs before decoding them, so a small file that decompresses to gigapixels costs
 *   nothing), each side at most `maxSide`;
 * - re-encoded: orientation applied, EXIF/XMP/comments (camera, GPS) dropped, and any bytes
 *   that were not image data (a polyglot file that is also HTML or a zip) gone.
 */
import { createHash } from "node:crypto";
import sharp, { type Metadata } from "sharp";

/** The formats accepted, as sharp names them. */
export const imageFormats = ["png", "jpeg", "gif", "webp", "avif"] as const;
export type ImageFormat = (typeof imageFormats)[number];

const contentTypes: Record<ImageFormat, string> = { png: "image/png", jpeg: "image/jpeg", gif: "image/gif", webp: "image/webp", avif: "image/avif" };
const extensions: Record<ImageFormat, string> = { png: "png", jpeg: "jpg", gif: "gif", webp: "webp", avif: "avif" };

/** Bounds of one image. */
export interface ImageLimits {
  /** Largest upload, in bytes. */
  maxBytes: number;
  /** Largest decoded image, width × height (× frames for animations). */
  maxPixels: number;
  /** Longest side, in pixels. */
  maxSide: number;
}

/** Defaults: a large screenshot or photo fits, a decompression bomb does not. */
export const defaultImageLimits: ImageLimits = { maxBytes: 5 * 1024 * 1024, maxPixels: 40_000_000, maxSide: 8192 };

/** An accepted image, ready to store. */
export interface CheckedImage {
  /** The re-encoded bytes (store these, never the upload). */
  data: Buffer;
  format: ImageFormat;
  /** `image/png`, …: the only content type to serve it with. */
  contentType: string;
  /** File name extension without the dot. */
  extension: string;
  width: number;
  height: number;
  /** Frames of an animated GIF or WebP (1 otherwise). */
  frames: number;
  /** Hex SHA-256 of `data`: a strong ETag. */
  sha256: string;
}

/** Why an upload is not accepted. */
export type ImageRejection = "image_too_large" | "image_dimensions" | "image_type" | "image_svg" | "image_unreadable" | "image_empty";

/** An upload refused by `checkImage`; the message is meant for the uploader. */
export class ImageRejected extends Error {
  readonly code: ImageRejection;
  constructor(code: ImageRejection, message: string) {
    super(message);
    this.name = "ImageRejected";
    this.code = code;
  }
}

/** The format a file's first bytes announce, or what else they look like. */
export function sniffImage(head: Buffer): ImageFormat | "svg" | "text" | null {
  const at = (offset: number, text: string) => head.subarray(offset, offset + text.length).toString("latin1") === text;
  if (head.length >= 8 && head.readUInt32BE(0) === 0x89504e47 && head.readUInt32BE(4) === 0x0d0a1a0a) return "png";
  if (head.length >= 3 && head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return "jpeg";
  if (at(0, "GIF87a") || at(0, "GIF89a")) return "gif";
  if (at(0, "RIFF") && at(8, "WEBP")) return "webp";
  if (at(4, "ftyp") && (at(8, "avif") || at(8, "avis"))) return "avif";
  // Text: skip a byte order mark and white space, then look for markup.
  const text = head.subarray(0, 1024).toString("utf8").replace(/^\uFEFF/, "").trimStart().toLowerCase();
  if (/^(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*(<!doctype svg|<svg[\s>])/.test(text) || /<svg[\s>]/.test(text)) return "svg";
  if (text.startsWith("<") || isPrintable(text.slice(0, 256))) return "text";
  return null;
}

/**
 * Checks an uploaded image by its content and re-encodes it (see the module comment).
 * @throws ImageRejected with a code and a message for the uploader.
 */
export async function checkImage(input: Buffer, limits: ImageLimits = defaultImageLimits): Promise<CheckedImage> {
  if (input.length === 0) throw new ImageRejected("image_empty", "The file is empty.");
  if (input.length > limits.maxBytes) {
    throw new ImageRejected("image_too_large", `The image is ${formatSize(input.length)}; images may be at most ${formatSize(limits.maxBytes)}.`);
  }
  const sniffed = sniffImage(input.subarray(0, 4096));
  if (sniffed === "svg") throw new ImageRejected("image_svg", "SVG images are not accepted (they can carry scripts); upload a PNG, JPEG, GIF, WebP or AVIF.");
  if (sniffed === null || sniffed === "text") {
    throw new ImageRejected("image_type", "The file is not an image this service accepts; upload a PNG, JPEG, GIF, WebP or AVIF.");
  }
  const animated = sniffed === "gif" || sniffed === "webp";
  let metadata: Metadata;
  try {
    // Reading the header decodes no pixels, so the dimensions are checked here first and
    // answered as such; decoding below is bounded by `limitInputPixels` as well.
    metadata = await sharp(input, { limitInputPixels: false, animated, failOn: "error" }).metadata();
  } catch {
    throw new ImageRejected("image_unreadable", `The file starts like a ${sniffed.toUpperCase()} image but could not be read as one.`);
  }
  // libvips answers what it decoded; a signature of one format over the body of another is refused.
  const format = metadata.format === "heif" && sniffed === "avif" ? "avif" : metadata.format;
  if (format !== sniffed) throw new ImageRejected("image_type", "The file's content does not match its image signature.");
  const frames = metadata.pages ?? 1;
  const width = metadata.width;
  const height = metadata.pageHeight ?? metadata.height;
  if (width > limits.maxSide || height > limits.maxSide || width * height * frames > limits.maxPixels) {
    throw new ImageRejected(
      "image_dimensions",
      `The image is ${width}×${height}${frames > 1 ? ` with ${frames} frames` : ""}; images may be at most ${limits.maxSide} pixels a side and ${(limits.maxPixels / 1e6).toFixed(0)} megapixels in all.`,
    );
  }
  let data: Buffer;
  try {
    data = await reencode(input, sniffed, limits.maxPixels, animated);
  } catch {
    throw new ImageRejected("image_unreadable", `The ${sniffed.toUpperCase()} image is damaged and could not be decoded.`);
  }
  const orientedWidth = (metadata.orientation ?? 1) >= 5 ? height : width;
  const orientedHeight = (metadata.orientation ?? 1) >= 5 ? width : height;
  return {
    data,
    format: sniffed,
    contentType: contentTypes[sniffed],
    extension: extensions[sniffed],
    width: orientedWidth,
    height: orientedHeight,
    frames,
    sha256: createHash("sha256").update(data).digest("hex"),
  };
}

/** Decodes the whole image and writes it again in its own format, without metadata. */
async function reencode(input: Buffer, format: ImageFormat, maxPixels: number, animated: boolean): Promise<Buffer> {
  // `autoOrient` applies the EXIF orientation before the metadata is dropped; sharp keeps no
  // metadata unless asked to.
  const image = sharp(input, { limitInputPixels: maxPixels, animated, failOn: "error" }).autoOrient();
  switch (format) {
    case "png":
      return image.png({ compressionLevel: 9, adaptiveFiltering: true }).toBuffer();
    case "jpeg":
      return image.jpeg({ quality: 90, mozjpeg: true }).toBuffer();
    case "gif":
      return image.gif().toBuffer();
    case "webp":
      return image.webp({ quality: 90 }).toBuffer();
    case "avif":
      return image.avif({ quality: 70 }).toBuffer();
  }
}

/** Whether a text holds only printable ASCII and line breaks or tabs. */
function isPrintable(text: string): boolean {
  for (const char of text) {
    const code = char.charCodeAt(0);
    if (!(code === 9 || code === 10 || code === 13 || (code >= 32 && code < 127))) return false;
  }
  return true;
}

/** `1.5 MB`, `800 KB`. */
function formatSize(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(1).replace(/\.0$/, "")} MB` : `${Math.ceil(bytes / 1024)} KB`;
}
