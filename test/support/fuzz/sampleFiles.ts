/**
 * Small files the fuzz uploads (in known-good body fragments and in the fixture world's
 * uploads): valid content, so that a route's checks pass and its work runs.
 */

/** A 1×1 PNG. */
const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==", "base64");

/** A 1×1 PNG file, for the image uploads. */
export const png = () => new File([PNG], "fuzz.png", { type: "image/png" });

/** A short text file, for the attachments. */
export const textFile = () => new File(["hello"], "a.txt", { type: "text/plain" });
