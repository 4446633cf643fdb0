/**
 * The FTP peer in a worker thread, for benchmarks: the server gets its own event loop, as a
 * real FTP server would have its own process, so the client's figures are not the server's
 * CPU time. The same file is the worker's entry point.
 */
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import { startFtpPeer, type FtpPeerOptions } from "./ftpPeer.ts";

/** A peer running in a worker thread. */
export interface ThreadedFtpPeer {
  host: string;
  port: number;
  username: string;
  password: string;
  root: string;
  close(): Promise<void>;
}

/** Starts the FTP peer in a worker thread. */
export async function startFtpPeerThread(options: FtpPeerOptions = {}): Promise<ThreadedFtpPeer> {
  const worker = new Worker(new URL(import.meta.url), { workerData: { ftpPeer: options } });
  const info = await new Promise<Omit<ThreadedFtpPeer, "close">>((resolve, reject) => {
    worker.once("message", resolve);
    worker.once("error", reject);
  });
  return {
    ...info,
    async close() {
      worker.postMessage("close");
      await new Promise((resolve) => worker.once("exit", resolve));
    },
  };
}

if (!isMainThread && (workerData as { ftpPeer?: FtpPeerOptions } | null)?.ftpPeer) {
  const peer = await startFtpPeer((workerData as { ftpPeer: FtpPeerOptions }).ftpPeer);
  parentPort!.postMessage({ host: peer.host, port: peer.port, username: peer.username, password: peer.password, root: peer.root });
  parentPort!.once("message", () => {
    void peer.close().then(() => process.exit(0));
  });
}
